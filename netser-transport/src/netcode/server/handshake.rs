//! The connection-request half of the netcode server: a request's token is opened and
//! checked, a challenge goes back, and the token's use is remembered against replays.

use super::*;

impl NetcodeServer {
    /// The standard's request steps, cheapest first; size and version were checked by
    /// `peek`.
    pub(super) fn handle_request(
        &mut self,
        from: SocketAddr,
        bytes: &mut [u8],
    ) -> Result<(), Refusal> {
        let Ok((
            _,
            Packet::ConnectionRequest {
                protocol_id,
                expire_timestamp,
                nonce,
                private_data,
            },
        )) = packet::decode_with(bytes, self.protocol_id, &[0; 32], None, self.layout)
        else {
            return Err(Refusal::WrongSize);
        };
        if protocol_id != self.protocol_id {
            return Err(Refusal::WrongProtocolId);
        }
        if expire_timestamp as f64 <= self.unix.unix_at(self.now) {
            return Err(Refusal::TokenExpired);
        }
        if self.by_addr.contains_key(&AddrKey(from)) {
            return Err(Refusal::AlreadyConnected);
        }
        let token = PrivateConnectToken::decrypt_with(
            private_data,
            protocol_id,
            expire_timestamp,
            nonce,
            &self.private_key.0,
            self.layout,
        )
        .map_err(|_| Refusal::TokenInvalid)?;
        let addresses = token.server_addresses.as_slice();
        if !addresses.iter().any(|a| self.public_addresses.contains(a)) {
            // The backend wrote the IPv6 addresses in the other layout: tell the client
            // at once (it cannot be told why) rather than let it time out.
            if addresses
                .iter()
                .any(|&a| self.public_addresses.contains(&self.layout.misread(a)))
            {
                let mut keys = Keys {
                    send_key: SecretKey(token.server_to_client_key),
                    receive_key: SecretKey(token.client_to_server_key),
                    sequence: self.use_token(PrivateConnectToken::mac_of(private_data), from)?,
                    token_mac: PrivateConnectToken::mac_of(private_data),
                    receive_floor: None,
                    received_max: None,
                };
                self.send(from, &Packet::ConnectionDenied, &mut keys);
                self.forget_keys(&keys);
                return Err(Refusal::LayoutMismatch);
            }
            return Err(Refusal::NotInHostList);
        }
        if self.by_id.contains_key(&token.client_id) {
            return Err(Refusal::AlreadyConnected);
        }
        let mac = PrivateConnectToken::mac_of(private_data);
        let next_sequence = self.use_token(mac, from)?;
        if self.token_uses.iter().any(|e| e.mac == mac && e.banned) {
            // Told at once, as a full server tells, rather than left to time out.
            let mut keys = Keys {
                send_key: SecretKey(token.server_to_client_key),
                receive_key: SecretKey(token.client_to_server_key),
                sequence: next_sequence,
                token_mac: mac,
                receive_floor: None,
                received_max: None,
            };
            self.send(from, &Packet::ConnectionDenied, &mut keys);
            self.forget_keys(&keys);
            self.denied_banned += 1;
            return Ok(());
        }
        let receive_floor = self
            .token_uses
            .iter()
            .find(|e| e.mac == mac)
            .and_then(|e| e.receive_floor);

        if let Some(pending) = self.pending.get_mut(&AddrKey(from)) {
            if pending.keys.token_mac == mac {
                // A repeated request: answer again with the same keys.
                pending.last_received = self.now;
                let mut keys = pending.keys.clone();
                self.send_challenge(from, token.client_id, &token.user_data, &mut keys);
                if let Some(pending) = self.pending.get_mut(&AddrKey(from)) {
                    pending.keys.sequence = keys.sequence;
                }
                return Ok(());
            }
            // The same address with a new token: the old handshake is abandoned.
            if let Some(old) = self.pending.remove(&AddrKey(from)) {
                self.forget_keys(&old.keys);
            }
        }
        let mut keys = Keys {
            send_key: SecretKey(token.server_to_client_key),
            receive_key: SecretKey(token.client_to_server_key),
            sequence: next_sequence,
            token_mac: mac,
            receive_floor,
            received_max: None,
        };
        if self.by_id.len() >= self.slots.len() {
            self.send(from, &Packet::ConnectionDenied, &mut keys);
            self.forget_keys(&keys);
            return Ok(());
        }
        if self.pending.len() >= self.max_pending {
            return Err(Refusal::PendingFull);
        }
        self.send_challenge(from, token.client_id, &token.user_data, &mut keys);
        self.pending.insert(
            AddrKey(from),
            Pending {
                client_id: token.client_id,
                keys,
                expire_timestamp,
                timeout_seconds: token.timeout_seconds,
                last_received: self.now,
            },
        );
        Ok(())
    }

    /// Ties a token to `from` (refusing it from any other address) and returns the next
    /// sequence for its key.
    fn use_token(&mut self, mac: [u8; MAC_BYTES], from: SocketAddr) -> Result<u64, Refusal> {
        if let Some(entry) = self.token_uses.iter_mut().find(|e| e.mac == mac) {
            if entry.addr != from {
                return Err(Refusal::TokenUsedElsewhere);
            }
            entry.last_used = self.now;
            return Ok(entry.next_sequence);
        }
        let entry = TokenUse {
            mac,
            addr: from,
            last_used: self.now,
            next_sequence: 0,
            receive_floor: None,
            banned: false,
        };
        if self.token_uses.len() < self.token_uses_max {
            self.token_uses.push(entry);
        } else if let Some(oldest) = self.token_uses.iter_mut().min_by(|a, b| {
            a.banned
                .cmp(&b.banned)
                .then(a.last_used.total_cmp(&b.last_used))
        }) {
            *oldest = entry;
        }
        Ok(0)
    }

    fn send_challenge(
        &mut self,
        to: SocketAddr,
        client_id: u64,
        user_data: &[u8; USER_DATA_BYTES],
        keys: &mut Keys,
    ) {
        let token_sequence = self.challenge_sequence;
        self.challenge_sequence += 1;
        let token_data =
            encrypt_challenge(client_id, user_data, token_sequence, &self.challenge_key.0);
        self.send(
            to,
            &Packet::Challenge {
                token_sequence,
                token_data: &token_data,
            },
            keys,
        );
    }
}
