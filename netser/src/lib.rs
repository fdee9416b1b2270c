//! netser (work in progress)
#![cfg_attr(not(feature = "std"), no_std)]
extern crate alloc;
