//! The payload rule both netcode peers apply before they encrypt: the client in
//! `send_payload`, the server in `send_payload` to a client.

use super::{Layout, PayloadError};

/// Payloads are 1 to [`Layout::max_payload_bytes`] bytes.
pub(crate) fn check_payload(payload: &[u8], layout: Layout) -> Result<(), PayloadError> {
    if payload.is_empty() {
        return Err(PayloadError::EmptyPayload);
    }
    let max = layout.max_payload_bytes();
    if payload.len() > max {
        return Err(PayloadError::PayloadTooLarge {
            len: payload.len(),
            max,
            layout,
        });
    }
    Ok(())
}
