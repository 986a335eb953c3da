//! The host's CPU count as a kind node will see it. A kind node's kubelet counts the CPUs the
//! kernel has online (cadvisor's machine info), not the ones the harness process may be limited
//! to, so on Linux this reads `/sys/devices/system/cpu/online` (`0-7`, `0,2-5`). Elsewhere, or
//! when that file is unreadable, it falls back to the standard library's parallelism. Under
//! Docker Desktop the nodes run in a VM: ask `docker info --format '{{.NCPU}}'` instead.

/// CPUs online on this machine.
pub fn online_cpus() -> u32 {
    std::fs::read_to_string("/sys/devices/system/cpu/online")
        .ok()
        .and_then(|text| count_cpu_list(text.trim()))
        .or_else(|| {
            std::thread::available_parallelism()
                .ok()
                .and_then(|n| u32::try_from(n.get()).ok())
        })
        .unwrap_or(1)
}

/// Counts a kernel CPU list such as `0-3,8,10-11` (7 CPUs).
pub fn count_cpu_list(list: &str) -> Option<u32> {
    let mut total = 0u32;
    for part in list.split(',').filter(|p| !p.is_empty()) {
        let (from, to) = match part.split_once('-') {
            Some((a, b)) => (a.parse::<u32>().ok()?, b.parse::<u32>().ok()?),
            None => {
                let cpu = part.parse::<u32>().ok()?;
                (cpu, cpu)
            }
        };
        total += to.checked_sub(from)? + 1;
    }
    (total > 0).then_some(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_are_counted() {
        assert_eq!(count_cpu_list("0-7"), Some(8));
        assert_eq!(count_cpu_list("0,2-5"), Some(5));
        assert_eq!(count_cpu_list("0-3,8,10-11"), Some(7));
        assert_eq!(count_cpu_list(""), None);
        assert_eq!(count_cpu_list("3-1"), None);
        assert!(online_cpus() >= 1);
    }
}
