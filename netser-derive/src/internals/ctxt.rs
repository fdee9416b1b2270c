//! Error collection: every mistake in a schema is recorded here so the user sees
//! all of them in one compile, each under its own tokens.

use core::cell::RefCell;
use core::fmt::Display;

use quote::ToTokens;

/// Collects errors while the input is parsed and checked.
///
/// Like serde_derive's `Ctxt`, it carries a drop bomb: forgetting to call
/// [`Ctxt::check`] is a bug in the macro, not something to silently lose.
#[derive(Default)]
pub struct Ctxt {
    errors: RefCell<Option<Vec<syn::Error>>>,
}

impl Ctxt {
    /// A context with no errors yet.
    pub fn new() -> Self {
        Ctxt {
            errors: RefCell::new(Some(Vec::new())),
        }
    }

    /// Records an error that underlines `tokens`.
    pub fn error_spanned_by<T: ToTokens, M: Display>(&self, tokens: T, message: M) {
        self.syn_error(syn::Error::new_spanned(tokens.into_token_stream(), message));
    }

    /// Records a parse error as it is.
    pub fn syn_error(&self, error: syn::Error) {
        self.errors
            .borrow_mut()
            .as_mut()
            .expect("Ctxt used after check")
            .push(error);
    }

    /// Whether any error has been recorded so far.
    pub fn has_errors(&self) -> bool {
        self.errors.borrow().as_ref().is_some_and(|e| !e.is_empty())
    }

    /// Consumes the context: all errors joined into one, or `Ok` when there were none.
    pub fn check(self) -> Result<(), syn::Error> {
        let mut errors = self
            .errors
            .borrow_mut()
            .take()
            .expect("Ctxt checked twice")
            .into_iter();
        let Some(mut combined) = errors.next() else {
            return Ok(());
        };
        for rest in errors {
            combined.combine(rest);
        }
        Err(combined)
    }
}

impl Drop for Ctxt {
    fn drop(&mut self) {
        if !std::thread::panicking() && self.errors.borrow().is_some() {
            panic!("forgot to check for errors");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_errors_is_ok() {
        let cx = Ctxt::new();
        assert!(!cx.has_errors());
        assert!(cx.check().is_ok());
    }

    #[test]
    fn errors_are_combined_in_order() {
        let cx = Ctxt::new();
        cx.syn_error(syn::Error::new(proc_macro2::Span::call_site(), "first"));
        cx.syn_error(syn::Error::new(proc_macro2::Span::call_site(), "second"));
        assert!(cx.has_errors());
        let err = cx.check().unwrap_err();
        let messages: Vec<String> = err.into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages, ["first", "second"]);
    }

    #[test]
    #[should_panic(expected = "forgot to check for errors")]
    fn drop_bomb_fires_when_unchecked() {
        let _cx = Ctxt::new();
    }
}
