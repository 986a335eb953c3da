//! How values are written on a workload's command line.

use std::net::SocketAddr;
use std::time::Duration;

/// A duration as every workload's humantime flags accept it, in whole milliseconds (`1500ms`).
pub fn duration_flag(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

/// `--listen LISTEN --admin-listen ADMIN`: the two listeners of a workload with an admin port
/// (the sidecar, the load balancer), where its command line starts.
pub fn listener_flags(listen: SocketAddr, admin_listen: SocketAddr) -> Vec<String> {
    vec![
        "--listen".into(),
        listen.to_string(),
        "--admin-listen".into(),
        admin_listen.to_string(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_whole_milliseconds() {
        assert_eq!(duration_flag(Duration::from_secs(30)), "30000ms");
        assert_eq!(duration_flag(Duration::from_micros(2500)), "2ms");
        assert_eq!(duration_flag(Duration::ZERO), "0ms");
    }
}
