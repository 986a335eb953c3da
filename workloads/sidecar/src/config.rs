//! Configuration: the command line ([`Cli`], clap derive) and the [`Config`] the library runs
//! with. Durations are humantime strings (`250ms`, `5s`, `1m`); `0` switches a limit off where
//! the flag says so.

use std::net::SocketAddr;
use std::time::Duration;

use clap::Parser;
use http::Uri;
use workload_common::identity::Identity;
use workload_common::serve::ServeOptions;

use crate::errors::SidecarError;
use crate::queue::QueueConfig;

/// Concurrency-limiting reverse proxy in front of one workload: at most N requests in flight to
/// the upstream (a stream holds its slot for its whole life), a FIFO admission queue in front of
/// the limit, readiness on saturation, Prometheus metrics on the admin port. Pod identity comes
/// from POD_NAME, NODE_NAME and ZONE.
#[derive(Debug, Clone, Parser)]
#[command(name = "sidecar", version)]
pub struct Cli {
    /// Address to accept client traffic on (also serves /healthz and /readyz).
    #[arg(long, default_value = "0.0.0.0:15006")]
    pub listen: SocketAddr,
    /// The workload behind the sidecar, as http://HOST:PORT.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    pub upstream: Uri,
    /// Most requests in flight to the upstream at once (streams included).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrency: u32,
    /// Most requests waiting for a slot; 0 = unbounded (the incident's setting).
    #[arg(long, default_value_t = 0)]
    pub queue_size: usize,
    /// Longest a request waits for a slot before a 503; 0 = forever (the incident's setting).
    #[arg(long, default_value = "0", value_parser = humantime::parse_duration)]
    pub queue_timeout: Duration,
    /// Address of the admin listener: /metrics (Prometheus), /healthz, /readyz.
    #[arg(long, default_value = "0.0.0.0:15020")]
    pub admin_listen: SocketAddr,
    /// Readiness on saturation: /readyz fails while the queue depth stays above N
    /// (for --readiness-for). Off unless given.
    #[arg(long)]
    pub readiness_queue_above: Option<usize>,
    /// How long the queue must stay above --readiness-queue-above before /readyz fails.
    #[arg(long, value_parser = humantime::parse_duration, requires = "readiness_queue_above")]
    pub readiness_for: Option<Duration>,
    /// Deadline for a complete non-streaming upstream response (504 when the head is late);
    /// streams are exempt; 0 = none.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub upstream_timeout: Duration,
    /// Deadline for opening a TCP connection to the upstream (502 connect after it).
    #[arg(long, default_value = "5s", value_parser = humantime::parse_duration)]
    pub connect_timeout: Duration,
    /// After SIGTERM keep accepting and serving this long with /readyz failing (in-app preStop).
    #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
    pub drain_delay: Duration,
    /// After accepting stops, wait at most this long for in-flight requests to finish.
    #[arg(long, default_value = "30s", value_parser = humantime::parse_duration)]
    pub shutdown_timeout: Duration,
    /// A client must send its complete request head within this time.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub header_read_timeout: Duration,
    /// Largest request head accepted, in bytes (at least 8192).
    #[arg(long, default_value_t = 16 * 1024)]
    pub max_header_bytes: usize,
    /// Serve every request through hyper and the tower stack (the general path) instead of the
    /// raw HTTP/1 keep-alive fast path for plain requests; for comparisons.
    #[arg(long)]
    pub no_fast_path: bool,
    /// On exit, after the drain, write the final counters to this file as one line
    /// (`sidecar-totals received=N admitted=N ...`), e.g. the container's
    /// terminationMessagePath `/dev/termination-log`. The line is printed on stdout too.
    #[arg(long)]
    pub termination_log: Option<std::path::PathBuf>,
}

/// Readiness on saturation: fail `/readyz` while the queue depth stays above `queue_above`
/// for at least `for_at_least`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SaturationReadiness {
    pub queue_above: usize,
    pub for_at_least: Duration,
}

/// Everything [`crate::serve`] needs.
#[derive(Debug, Clone)]
pub struct Config {
    /// `http://host:port` of the workload.
    pub upstream: Uri,
    /// Most requests in flight to the upstream (at least 1).
    pub max_concurrency: usize,
    /// Admission queue bound; `None` = unbounded.
    pub queue_size: Option<usize>,
    /// Admission queue timeout; `None` = wait forever.
    pub queue_timeout: Option<Duration>,
    /// Readiness on saturation; `None` = off.
    pub readiness: Option<SaturationReadiness>,
    /// Deadline for non-streaming responses; `None` = none.
    pub upstream_timeout: Option<Duration>,
    /// Deadline for connecting to the upstream.
    pub connect_timeout: Duration,
    /// Header limits and drain timings of the main listener.
    pub serve: ServeOptions,
    /// Identity put on responses the sidecar generates.
    pub identity: Identity,
    /// Plain HTTP/1.1 requests take the raw fast path (false: everything through hyper).
    pub fast_path: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            upstream: Uri::from_static("http://127.0.0.1:8080"),
            max_concurrency: 100,
            queue_size: None,
            queue_timeout: None,
            readiness: None,
            upstream_timeout: Some(Duration::from_secs(30)),
            connect_timeout: Duration::from_secs(5),
            serve: ServeOptions::default(),
            identity: Identity::from_lookup(|_| None),
            fast_path: true,
        }
    }
}

/// `0` means "off" for the flags that say so.
fn nonzero(d: Duration) -> Option<Duration> {
    (!d.is_zero()).then_some(d)
}

impl Cli {
    /// The library configuration these flags describe, with `identity` for the sidecar's own
    /// responses.
    pub fn to_config(&self, identity: Identity) -> Result<Config, SidecarError> {
        let config = Config {
            upstream: self.upstream.clone(),
            max_concurrency: self.max_concurrency as usize,
            queue_size: (self.queue_size > 0).then_some(self.queue_size),
            queue_timeout: nonzero(self.queue_timeout),
            readiness: self
                .readiness_queue_above
                .map(|queue_above| SaturationReadiness {
                    queue_above,
                    for_at_least: self.readiness_for.unwrap_or(Duration::ZERO),
                }),
            upstream_timeout: nonzero(self.upstream_timeout),
            connect_timeout: self.connect_timeout,
            serve: ServeOptions {
                header_read_timeout: self.header_read_timeout,
                max_header_bytes: self.max_header_bytes,
                drain_delay: self.drain_delay,
                shutdown_timeout: self.shutdown_timeout,
            },
            identity,
            fast_path: !self.no_fast_path,
        };
        config.validate()?;
        Ok(config)
    }
}

impl Config {
    /// Checks what the types cannot: a usable upstream URI and a positive limit.
    pub fn validate(&self) -> Result<(), SidecarError> {
        if self.max_concurrency == 0 {
            return Err(SidecarError::Config(
                "max concurrency must be at least 1".into(),
            ));
        }
        if self.upstream.scheme_str() != Some("http") || self.upstream.authority().is_none() {
            return Err(SidecarError::Config(format!(
                "upstream must be http://HOST:PORT, got {}",
                self.upstream
            )));
        }
        if !matches!(self.upstream.path(), "" | "/") || self.upstream.query().is_some() {
            return Err(SidecarError::Config(format!(
                "upstream must not have a path, got {}",
                self.upstream
            )));
        }
        Ok(())
    }

    /// The admission queue this configuration asks for.
    pub fn queue_config(&self) -> QueueConfig {
        QueueConfig {
            capacity: self.queue_size,
            timeout: self.queue_timeout,
            saturated_above: self.readiness.map(|r| r.queue_above),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("sidecar").chain(args.iter().copied()))
    }

    #[test]
    fn zero_means_unbounded_and_forever() {
        let cli = parse(&["--queue-size", "0", "--queue-timeout", "0"]).unwrap();
        let config = cli.to_config(Identity::from_lookup(|_| None)).unwrap();
        assert_eq!(config.queue_size, None);
        assert_eq!(config.queue_timeout, None);
        assert_eq!(config.readiness, None);
        assert_eq!(config.upstream_timeout, Some(Duration::from_secs(30)));
        assert!(config.fast_path, "the fast path is on unless switched off");
        let general = parse(&["--no-fast-path"]).unwrap();
        assert!(
            !general
                .to_config(Identity::from_lookup(|_| None))
                .unwrap()
                .fast_path
        );
    }

    #[test]
    fn flags_fill_the_config() {
        let cli = parse(&[
            "--upstream=http://10.0.0.1:9000",
            "--max-concurrency=4",
            "--queue-size=8",
            "--queue-timeout=250ms",
            "--readiness-queue-above=3",
            "--readiness-for=2s",
            "--drain-delay=5s",
        ])
        .unwrap();
        let config = cli.to_config(Identity::from_lookup(|_| None)).unwrap();
        assert_eq!(config.max_concurrency, 4);
        assert_eq!(config.queue_size, Some(8));
        assert_eq!(config.queue_timeout, Some(Duration::from_millis(250)));
        let readiness = config.readiness.unwrap();
        assert_eq!(readiness.queue_above, 3);
        assert_eq!(readiness.for_at_least, Duration::from_secs(2));
        assert_eq!(config.serve.drain_delay, Duration::from_secs(5));
        assert_eq!(config.queue_config().saturated_above, Some(3));
    }

    #[test]
    fn rejects_bad_input() {
        assert!(parse(&["--max-concurrency=0"]).is_err());
        assert!(
            parse(&["--readiness-for=1s"]).is_err(),
            "needs the threshold"
        );
        let https = parse(&["--upstream=https://x:1"]).unwrap();
        assert!(https.to_config(Identity::from_lookup(|_| None)).is_err());
        let with_path = parse(&["--upstream=http://x:1/api"]).unwrap();
        assert!(
            with_path
                .to_config(Identity::from_lookup(|_| None))
                .is_err()
        );
    }
}
