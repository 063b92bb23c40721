//! The trial phase sequence, enforced on both ends (sans-IO).
//!
//! hello → setup → ready → start → (running) → stop → results → teardown → done.
//! Teardown is accepted in every phase after hello, so an aborted trial always
//! unwinds. The machines only judge messages; they never perform I/O.
//!
//! Owns: `AgentPhase`, `ControllerPhase` and their transition rules.
//! Must not: do I/O or read clocks; it looks at `msg` and nothing below it.

use crate::msg::{FromAgent, ToAgent};
use crate::PROTOCOL_VERSION;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PhaseError {
    #[error("protocol version mismatch: controller speaks {controller}, agent speaks {agent}")]
    Version { controller: u32, agent: u32 },
    #[error("'{message}' is not allowed in phase '{phase}'")]
    Unexpected {
        message: &'static str,
        phase: &'static str,
    },
}

/// Phase of an agent, driven by what the controller sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AgentPhase {
    AwaitHello,
    AwaitSetup,
    Ready,
    Running,
    Stopped,
    Done,
}

impl AgentPhase {
    pub fn name(self) -> &'static str {
        match self {
            AgentPhase::AwaitHello => "await-hello",
            AgentPhase::AwaitSetup => "await-setup",
            AgentPhase::Ready => "ready",
            AgentPhase::Running => "running",
            AgentPhase::Stopped => "stopped",
            AgentPhase::Done => "done",
        }
    }

    /// The phase after `msg`, or why `msg` is refused (phase unchanged then).
    /// A `Setup` moves to `Ready` only once the agent reports success; callers use
    /// [`AgentPhase::setup_failed`] to stay in `AwaitSetup` otherwise.
    pub fn on_message(self, msg: &ToAgent) -> Result<AgentPhase, PhaseError> {
        use AgentPhase::*;
        let next = match (self, msg) {
            (AwaitHello, ToAgent::Hello { version }) => {
                if *version != PROTOCOL_VERSION {
                    return Err(PhaseError::Version {
                        controller: *version,
                        agent: PROTOCOL_VERSION,
                    });
                }
                AwaitSetup
            }
            (AwaitSetup, ToAgent::Setup(_)) => Ready,
            (Ready, ToAgent::Start) => Running,
            (Running, ToAgent::Poll) => Running,
            (Running, ToAgent::Tally) => Running,
            (Running, ToAgent::Stop) => Stopped,
            // A clock reading changes nothing; allowed between hello and done.
            (p, ToAgent::Time) if p != AwaitHello && p != Done => p,
            (AwaitHello, ToAgent::Teardown) => {
                return Err(PhaseError::Unexpected {
                    message: msg.name(),
                    phase: self.name(),
                })
            }
            (Done, _) => {
                return Err(PhaseError::Unexpected {
                    message: msg.name(),
                    phase: self.name(),
                })
            }
            (_, ToAgent::Teardown) => Done,
            _ => {
                return Err(PhaseError::Unexpected {
                    message: msg.name(),
                    phase: self.name(),
                })
            }
        };
        Ok(next)
    }

    /// Setup failed: the agent reports an error and waits for another setup or teardown.
    pub fn setup_failed(self) -> AgentPhase {
        AgentPhase::AwaitSetup
    }
}

/// What the controller expects from one agent next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControllerPhase {
    AwaitHello,
    AwaitReady,
    AwaitStarted,
    AwaitResults,
    AwaitDone,
    Closed,
}

impl ControllerPhase {
    pub fn name(self) -> &'static str {
        match self {
            ControllerPhase::AwaitHello => "await-hello",
            ControllerPhase::AwaitReady => "await-ready",
            ControllerPhase::AwaitStarted => "await-started",
            ControllerPhase::AwaitResults => "await-results",
            ControllerPhase::AwaitDone => "await-done",
            ControllerPhase::Closed => "closed",
        }
    }

    /// The phase after the agent's reply. Errors never advance the phase: the
    /// caller decides (an error reply is not a protocol violation).
    pub fn on_reply(self, msg: &FromAgent) -> Result<ControllerPhase, PhaseError> {
        use ControllerPhase::*;
        match (self, msg) {
            (_, FromAgent::Error(_)) => Ok(self),
            (AwaitHello, FromAgent::Hello { version, .. }) => {
                if *version != PROTOCOL_VERSION {
                    Err(PhaseError::Version {
                        controller: PROTOCOL_VERSION,
                        agent: *version,
                    })
                } else {
                    Ok(AwaitReady)
                }
            }
            (AwaitReady, FromAgent::Ready) => Ok(AwaitStarted),
            (AwaitStarted, FromAgent::Started) => Ok(AwaitResults),
            (AwaitResults, FromAgent::Progress { .. }) => Ok(AwaitResults),
            (AwaitResults, FromAgent::Tally(_)) => Ok(AwaitResults),
            (p, FromAgent::Time { .. }) if p != AwaitHello && p != Closed => Ok(p),
            (AwaitResults, FromAgent::Results { .. }) => Ok(AwaitDone),
            (_, FromAgent::Done) if self != Closed => Ok(Closed),
            _ => Err(PhaseError::Unexpected {
                message: msg.name(),
                phase: self.name(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gateway::{GatewayResults, GatewaySpec};
    use crate::msg::*;
    use crate::role::{RoleResults, RoleSpec};

    fn setup() -> ToAgent {
        ToAgent::Setup(RoleSpec::Gateway(GatewaySpec::default()))
    }

    /// Drive both machines as a pair: each controller message is judged by the agent,
    /// each agent reply by the controller.
    #[test]
    fn full_sequence_as_a_pair() {
        let mut a = AgentPhase::AwaitHello;
        let mut c = ControllerPhase::AwaitHello;
        let script: Vec<(ToAgent, FromAgent)> = vec![
            (
                ToAgent::Hello {
                    version: PROTOCOL_VERSION,
                },
                FromAgent::Hello {
                    version: PROTOCOL_VERSION,
                    agent: AgentInfo::default(),
                },
            ),
            (setup(), FromAgent::Ready),
            (ToAgent::Start, FromAgent::Started),
            (
                ToAgent::Stop,
                FromAgent::Results {
                    results: RoleResults::Gateway(GatewayResults::default()),
                    samples: vec![],
                },
            ),
            (ToAgent::Teardown, FromAgent::Done),
        ];
        for (to, from) in script {
            a = a.on_message(&to).unwrap();
            c = c.on_reply(&from).unwrap();
        }
        assert_eq!(a, AgentPhase::Done);
        assert_eq!(c, ControllerPhase::Closed);
    }

    #[test]
    fn tallies_only_while_running() {
        assert_eq!(
            AgentPhase::Running.on_message(&ToAgent::Tally),
            Ok(AgentPhase::Running)
        );
        assert!(AgentPhase::Ready.on_message(&ToAgent::Tally).is_err());
        assert!(AgentPhase::Stopped.on_message(&ToAgent::Tally).is_err());
        let t = FromAgent::Tally(crate::measure::Tally::default());
        assert_eq!(
            ControllerPhase::AwaitResults.on_reply(&t),
            Ok(ControllerPhase::AwaitResults)
        );
        assert!(ControllerPhase::AwaitReady.on_reply(&t).is_err());
        // On the wire: a small tagged object; an older agent's reply without bytes reads.
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(json, r#"{"type":"tally","t_ns":0,"count":0,"bytes":0}"#);
        let old: FromAgent =
            serde_json::from_str(r#"{"type":"tally","t_ns":5,"count":2}"#).unwrap();
        assert_eq!(
            old,
            FromAgent::Tally(crate::measure::Tally {
                t_ns: 5,
                count: 2,
                ..Default::default()
            })
        );
    }

    #[test]
    fn out_of_order_messages_refused() {
        let a = AgentPhase::AwaitHello;
        assert!(a.on_message(&ToAgent::Start).is_err());
        let a = a
            .on_message(&ToAgent::Hello {
                version: PROTOCOL_VERSION,
            })
            .unwrap();
        let e = a.on_message(&ToAgent::Stop).unwrap_err();
        assert_eq!(
            e.to_string(),
            "'stop' is not allowed in phase 'await-setup'"
        );
        let a = a.on_message(&setup()).unwrap();
        assert!(a.on_message(&setup()).is_err());
        assert_eq!(a.on_message(&ToAgent::Teardown), Ok(AgentPhase::Done));
        assert!(AgentPhase::Done.on_message(&ToAgent::Teardown).is_err());
    }

    #[test]
    fn version_mismatch_both_ways() {
        let e = AgentPhase::AwaitHello
            .on_message(&ToAgent::Hello { version: 99 })
            .unwrap_err();
        assert!(matches!(e, PhaseError::Version { controller: 99, .. }));
        let e = ControllerPhase::AwaitHello
            .on_reply(&FromAgent::Hello {
                version: 99,
                agent: AgentInfo::default(),
            })
            .unwrap_err();
        assert!(e.to_string().contains("agent speaks 99"));
    }

    #[test]
    fn errors_do_not_advance_and_teardown_always_unwinds() {
        let err = FromAgent::Error(AgentError {
            kind: ErrorKind::Unavailable,
            message: "x".into(),
        });
        assert_eq!(
            ControllerPhase::AwaitReady.on_reply(&err),
            Ok(ControllerPhase::AwaitReady)
        );
        assert_eq!(
            ControllerPhase::AwaitReady.on_reply(&FromAgent::Done),
            Ok(ControllerPhase::Closed)
        );
        assert!(ControllerPhase::AwaitReady
            .on_reply(&FromAgent::Started)
            .is_err());
        for p in [
            AgentPhase::AwaitSetup,
            AgentPhase::Ready,
            AgentPhase::Running,
        ] {
            assert_eq!(p.on_message(&ToAgent::Teardown), Ok(AgentPhase::Done));
        }
    }
}
