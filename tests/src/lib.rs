//! Integration tests for netser live in `tests/tests/`. This library holds what they
//! share with the fuzz targets in `fuzz/` ([`adversarial`]), and the quantizations the
//! sampled quantization tests check ([`quantizers`]).

pub mod adversarial;
pub mod quantizers;
