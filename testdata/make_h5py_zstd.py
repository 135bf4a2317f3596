# Regenerates testdata/h5py_zstd.h5 (see testdata/README.md).
import sys, numpy as np, h5py, hdf5plugin
out = sys.argv[1]
with h5py.File(out, "w", track_order=False) as f:
    i = np.arange(5000, dtype=np.float64)
    f.create_dataset("f64_shuffle_zstd", data=np.round(np.sin(i * 0.001) * 100.0, 3), chunks=(1000,), shuffle=True,
                     **hdf5plugin.Zstd(clevel=5))
    b = (np.arange(3000) * 7 % 251).astype(np.uint8)
    f.create_dataset("u8_zstd", data=b, chunks=(1024,), **hdf5plugin.Zstd())
    f.attrs["generator"] = "h5py %s, hdf5plugin %s, HDF5 %s" % (h5py.__version__, hdf5plugin.version, h5py.version.hdf5_version)
