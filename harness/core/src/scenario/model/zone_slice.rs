//! The part of the traffic an expectation measures (`originZone`, `destinationZone`).

/// Callers in `origin` (the generators in that zone), answers from pods in `destination`
/// (the answering pod's zone); `None` on either side: every zone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ZoneSlice {
    pub origin: Option<String>,
    pub destination: Option<String>,
}

impl ZoneSlice {
    /// No restriction: every caller, every pod.
    pub fn is_whole(&self) -> bool {
        self.origin.is_none() && self.destination.is_none()
    }

    /// ` from zone-a`, ` to zone-b`, ` from zone-a to zone-b`, or empty.
    pub fn suffix(&self) -> String {
        let mut out = String::new();
        if let Some(origin) = &self.origin {
            out.push_str(&format!(" from {origin}"));
        }
        if let Some(destination) = &self.destination {
            out.push_str(&format!(" to {destination}"));
        }
        out
    }
}
