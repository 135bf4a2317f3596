//! Spatial index algorithms (HEP002 §10): pure, no HDF5.
