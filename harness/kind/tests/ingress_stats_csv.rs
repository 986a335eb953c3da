//! The stats CSV parser against a real HAProxy 2.x (`haproxy` on PATH or /usr/sbin/haproxy;
//! `.ci/run` installs Debian's) started on loopback with a configuration shaped like
//! haproxy-ingress v0.16's: `listen stats` with `stats uri /` and `stats show-legends`, a
//! backend named `<namespace>_<service>_<port>` with pod-named servers and a disabled empty
//! slot at 127.0.0.1:1023. The list follows a `-sf` reload with a new order, and a runtime-API
//! refill of the empty slot (which keeps the slot's name, with the new address).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use harness_kind::driver::ingress::stats_csv::{StatsServer, backend_servers};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const BACKEND: &str = "run-ns_flagsvc_8080";

fn haproxy() -> PathBuf {
    ["/usr/sbin/haproxy", "/usr/local/sbin/haproxy"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.exists())
        .expect("haproxy is not installed: apt-get install haproxy (.ci/run does)")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// The configuration: `servers` are (name, "ip:port", disabled).
fn config(stats_port: u16, socket: &Path, servers: &[(&str, String, bool)]) -> String {
    let mut text = format!(
        "global\n    stats socket {} level admin expose-fd listeners mode 600\n\
         defaults\n    mode http\n    timeout client 5s\n    timeout connect 1s\n    timeout server 5s\n\
         backend {BACKEND}\n    mode http\n    balance roundrobin\n",
        socket.display()
    );
    for (name, addr, disabled) in servers {
        text.push_str(&format!(
            "    server {name} {addr}{} weight 1\n",
            if *disabled { " disabled" } else { "" }
        ));
    }
    text.push_str(&format!(
        "listen stats\n    mode http\n    bind 127.0.0.1:{stats_port}\n    stats enable\n    stats uri /\n    no log\n    option httpclose\n    stats show-legends\n"
    ));
    text
}

/// A foreground HAProxy; `replaces`: the pid it takes over from (`-sf`).
fn start(cfg: &Path, replaces: Option<u32>) -> Child {
    let mut command = Command::new(haproxy());
    command.arg("-db").arg("-f").arg(cfg);
    if let Some(pid) = replaces {
        command.arg("-sf").arg(pid.to_string());
    }
    command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("haproxy starts")
}

struct Stop(Vec<Child>);

impl Drop for Stop {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

async fn csv(client: &reqwest::Client, port: u16) -> String {
    client
        .get(format!("http://127.0.0.1:{port}/;csv"))
        .send()
        .await
        .expect("the stats listener answers")
        .text()
        .await
        .unwrap()
}

/// Polls the CSV until `check` holds on the backend's servers (bounded: 5 s).
async fn servers_when(
    client: &reqwest::Client,
    port: u16,
    check: impl Fn(&[StatsServer]) -> bool,
) -> Vec<StatsServer> {
    let mut last = Vec::new();
    for _ in 0..50 {
        if let Ok(response) = client
            .get(format!("http://127.0.0.1:{port}/;csv"))
            .send()
            .await
            && let Ok(text) = response.text().await
            && let Ok(servers) = backend_servers(&text, BACKEND)
        {
            if check(&servers) {
                return servers;
            }
            last = servers;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the servers never matched; last seen {last:?}");
}

fn listed(servers: &[StatsServer]) -> Vec<String> {
    servers
        .iter()
        .filter(|s| s.is_listed())
        .map(|s| format!("{} {}", s.name, s.addr.as_deref().unwrap_or("?")))
        .collect()
}

async fn runtime_api(socket: &Path, command: &str) -> String {
    let mut stream = tokio::net::UnixStream::connect(socket).await.unwrap();
    stream
        .write_all(format!("{command}\n").as_bytes())
        .await
        .unwrap();
    let mut out = String::new();
    tokio::time::timeout(Duration::from_secs(5), stream.read_to_string(&mut out))
        .await
        .expect("the runtime API answers")
        .unwrap();
    out
}

#[tokio::test]
async fn the_list_follows_reloads_and_runtime_updates_of_a_real_haproxy() {
    let dir = tempfile::tempdir().unwrap();
    let (cfg, socket) = (
        dir.path().join("haproxy.cfg"),
        dir.path().join("admin.sock"),
    );
    let stats = free_port();
    let (a, b, c) = (
        format!("127.0.0.1:{}", free_port()),
        format!("127.0.0.1:{}", free_port()),
        format!("127.0.0.1:{}", free_port()),
    );
    let empty = "127.0.0.1:1023".to_owned();
    std::fs::write(
        &cfg,
        config(
            stats,
            &socket,
            &[
                ("flagsvc-a", a.clone(), false),
                ("flagsvc-b", b.clone(), false),
                ("srv003", empty.clone(), true),
            ],
        ),
    )
    .unwrap();
    let first = start(&cfg, None);
    let first_pid = first.id();
    let mut running = Stop(vec![first]);
    let client = reqwest::Client::new();

    let servers = servers_when(&client, stats, |s| s.len() == 3).await;
    assert_eq!(servers[2].status, "MAINT", "{servers:?}");
    assert_eq!(servers[2].addr.as_deref(), Some("127.0.0.1:1023"));
    assert_eq!(
        listed(&servers),
        [format!("flagsvc-a {a}"), format!("flagsvc-b {b}")]
    );
    // Every header column the parser needs is in this HAProxy's CSV.
    assert!(csv(&client, stats).await.starts_with("# pxname,svname,"));

    // A reload the way haproxy-ingress' `native` strategy does it: a new process with
    // `-sf OLD` and the re-rendered configuration (here in another order).
    std::fs::write(
        &cfg,
        config(
            stats,
            &socket,
            &[
                ("flagsvc-b", b.clone(), false),
                ("flagsvc-a", a.clone(), false),
                ("srv003", empty.clone(), true),
            ],
        ),
    )
    .unwrap();
    running.0.push(start(&cfg, Some(first_pid)));
    let servers = servers_when(&client, stats, |s| s[0].name == "flagsvc-b").await;
    assert_eq!(
        listed(&servers),
        [format!("flagsvc-b {b}"), format!("flagsvc-a {a}")]
    );

    // v0.16's dynamic update: the empty slot gets a pod's address and is made ready.
    let (c_ip, c_port) = c.rsplit_once(':').unwrap();
    let answer = runtime_api(
        &socket,
        &format!("set server {BACKEND}/srv003 addr {c_ip} port {c_port}"),
    )
    .await;
    assert!(answer.contains("changed"), "{answer}");
    runtime_api(&socket, &format!("set server {BACKEND}/srv003 state ready")).await;
    let servers = servers_when(&client, stats, |s| s[2].is_listed()).await;
    assert_eq!(
        listed(&servers),
        [
            format!("flagsvc-b {b}"),
            format!("flagsvc-a {a}"),
            format!("srv003 {c}")
        ]
    );
    assert_eq!(servers[2].ip(), Some("127.0.0.1"));

    // And back to maintenance: an emptied slot leaves the list.
    runtime_api(&socket, &format!("set server {BACKEND}/srv003 state maint")).await;
    let servers = servers_when(&client, stats, |s| !s[2].is_listed()).await;
    assert_eq!(listed(&servers).len(), 2);
}
