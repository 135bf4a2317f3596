//! Bounded ISO WKB decode/encode and the zero-allocation bounds scan (HEP002 §7.1).
