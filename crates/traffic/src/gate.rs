//! Start gate for worker threads created at setup and released by `start`.

use std::sync::{Arc, Condvar, Mutex};

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Gate {
    Wait,
    Go,
    Abort,
}

/// Shared between the owner (who opens it) and its workers (who wait on it).
#[derive(Clone, Default)]
pub struct StartGate(Arc<(Mutex<Option<Gate>>, Condvar)>);

impl StartGate {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn open(&self, to: Gate) {
        let (m, cv) = &*self.0;
        if let Ok(mut g) = m.lock() {
            *g = Some(to);
        }
        cv.notify_all();
    }

    /// Block until the gate opens; true for `Go`, false for `Abort`.
    pub fn wait(&self) -> bool {
        let (m, cv) = &*self.0;
        let Ok(mut g) = m.lock() else { return false };
        loop {
            match *g {
                Some(Gate::Go) => return true,
                Some(Gate::Abort) => return false,
                _ => match cv.wait(g) {
                    Ok(x) => g = x,
                    Err(_) => return false,
                },
            }
        }
    }
}
