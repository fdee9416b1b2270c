//! What the game server and client keep for state synchronization: per client on the
//! server, whole snapshots or an entity set; on the client, the receivers of both.

use netser::{Decoder, NetDelta};

use super::entities::{EntityConfig, EntitySendError, EntitySender};
use super::entity_receiver::EntityReceiver;
use super::receiver::SnapshotReceiver;
use super::sender::{SnapshotPeer, SnapshotSendError};
use super::{SnapshotConfig, SnapshotConfigError, KIND_SNAPSHOT};
use crate::connection::ReceivedSection;

/// A snapshot or entity set a game server could not send to a client.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum SnapshotError {
    /// No connected client with this id.
    NotConnected,
    /// The whole snapshot was not sent.
    Snapshot(SnapshotSendError),
    /// The entity set was not sent.
    Entities(EntitySendError),
}

impl core::fmt::Display for SnapshotError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            Self::NotConnected => write!(
                f,
                "the client is not connected; wait for its ClientConnected event"
            ),
            Self::Snapshot(_) => write!(f, "snapshot not sent"),
            Self::Entities(_) => write!(f, "entity set not sent"),
        }
    }
}

impl std::error::Error for SnapshotError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::NotConnected => None,
            Self::Snapshot(error) => Some(error),
            Self::Entities(error) => Some(error),
        }
    }
}

/// A server's state synchronization with one client: whole snapshots or an entity set
/// (switching starts the other from nothing).
#[derive(Debug)]
pub(crate) enum ClientSync<S> {
    Idle,
    Snapshots(SnapshotPeer),
    Entities(Box<EntitySender<S>>),
}

impl<S: NetDelta + PartialEq + Clone> ClientSync<S> {
    pub fn peer(&mut self, config: &SnapshotConfig) -> &mut SnapshotPeer {
        if !matches!(self, Self::Snapshots(_)) {
            *self = Self::Snapshots(SnapshotPeer::new(config.clone()).expect("validated"));
        }
        match self {
            Self::Snapshots(peer) => peer,
            _ => unreachable!("just set"),
        }
    }

    pub fn entities(&mut self, config: &EntityConfig) -> &mut EntitySender<S> {
        if !matches!(self, Self::Entities(_)) {
            *self = Self::Entities(Box::new(
                EntitySender::new(config.clone()).expect("validated"),
            ));
        }
        match self {
            Self::Entities(sender) => sender,
            _ => unreachable!("just set"),
        }
    }
}

/// A client's receivers: whole snapshots, and (once an entity set arrives) entities.
#[derive(Debug)]
pub(crate) struct ClientReceivers<S> {
    pub snapshots: SnapshotReceiver<S>,
    pub entities: Option<Box<EntityReceiver<S>>>,
    pub entity_config: EntityConfig,
}

impl<S: NetDelta + Clone> ClientReceivers<S> {
    pub fn new(
        snapshot: SnapshotConfig,
        entity_config: EntityConfig,
    ) -> Result<Self, SnapshotConfigError> {
        entity_config.validate()?;
        Ok(Self {
            snapshots: SnapshotReceiver::new(snapshot)?,
            entities: None,
            entity_config,
        })
    }

    /// Hands a section to the receiver of its kind.
    pub fn take_section(&mut self, section: ReceivedSection<'_>) -> bool {
        match section.reader().read_bool() {
            Ok(KIND_SNAPSHOT) => self.snapshots.take_section(section),
            Ok(_) => self
                .entities
                .get_or_insert_with(|| {
                    Box::new(EntityReceiver::new(self.entity_config.clone()).expect("validated"))
                })
                .take_section(section),
            Err(_) => false,
        }
    }
}
