//! Integration tests for netser live in `tests/tests/`; this library is empty.
