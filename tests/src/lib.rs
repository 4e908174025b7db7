//! Support for the integration tests: see `harness`.
