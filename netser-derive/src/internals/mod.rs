//! Parsing and checking: syn AST -> typed description -> checked wire forms.

pub mod ast;
pub mod attr;
pub mod check;
pub mod ctxt;
pub mod respan;
pub mod wire;
