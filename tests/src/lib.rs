//! Integration tests for netser live in `tests/tests/`. This library holds what they
//! share with the fuzz targets in `fuzz/`: see [`adversarial`].

pub mod adversarial;
