//! Shaping allocatable CPU on kind nodes. Every kind node is a container on one host and
//! reports the host's CPUs as its capacity (cadvisor's core count); the kubelet's allocatable is
//! `capacity - kube-reserved - system-reserved` (clamped at zero), with no eviction threshold
//! for CPU (kubernetes `pkg/kubelet/nodestatus/setters.go`, `MachineInfo`). So a node's
//! allocatable is set by reserving `host - target` millicores, and no node can have more than
//! the host.
//!
//! The topology-hint algorithm reads only each zone's *share* of the summed allocatable CPU
//! (`float64(zone.MilliValue()) / float64(total.MilliValue())`,
//! `staging/src/k8s.io/endpointslice/topologycache/topologycache.go`). When the host is smaller
//! than the scenario's largest node, [`CpuScale`] multiplies every shaped value by one factor so
//! that the shares stay exact: with `g` the greatest common divisor of all values and
//! `u_i = v_i / g`, each value becomes `s * u_i` millicores for the largest `s` with
//! `s * max(u) <= host`. Integer sums of exactly proportional integers have exactly the same
//! quotient, and IEEE division rounds that one real number to one `f64`, so the controller
//! computes bit-identical ratios. Only when even `max(u)` exceeds the host (values that share
//! no common divisor, such as 4001m and 8000m on 2 CPUs) is exactness impossible in millicores;
//! then each value is rounded down and the scale says it is not exact.

use std::fmt;

/// The factor by which a scenario's allocatable CPU values are multiplied on a given host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CpuScale {
    host_millicpu: u64,
    mode: Mode,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `v * numerator / denominator` is an integer for every value the scale was built from.
    Exact { numerator: u64, denominator: u64 },
    /// `floor(v * host / largest)`: the ratios are rounded.
    Rounded { largest: u64 },
}

impl CpuScale {
    /// The scale for `values` (millicores, all > 0) on a host with `host_cpus` CPUs.
    /// `values` must hold every allocatable CPU value the cluster will ever be given (initial
    /// workers, nodes added by the timeline, `setAllocatableCpu` targets), or later values may
    /// not be exact.
    pub fn for_values(values: &[u64], host_cpus: u32) -> CpuScale {
        let host_millicpu = u64::from(host_cpus) * 1000;
        let largest = values.iter().copied().max().unwrap_or(0);
        let divisor = values.iter().copied().fold(0, gcd);
        let mode = if largest <= host_millicpu || divisor == 0 {
            Mode::Exact {
                numerator: 1,
                denominator: 1,
            }
        } else {
            let steps = host_millicpu / (largest / divisor);
            if steps == 0 {
                Mode::Rounded { largest }
            } else {
                Mode::Exact {
                    numerator: steps,
                    denominator: divisor,
                }
            }
        };
        CpuScale {
            host_millicpu,
            mode,
        }
    }

    /// The host's CPUs in millicores: every node's capacity.
    pub fn host_millicpu(&self) -> u64 {
        self.host_millicpu
    }

    /// The factor as a number (1 when the host holds the largest node).
    pub fn factor(&self) -> f64 {
        match self.mode {
            Mode::Exact {
                numerator,
                denominator,
            } => numerator as f64 / denominator as f64,
            Mode::Rounded { largest } => self.host_millicpu as f64 / largest as f64,
        }
    }

    /// Whether zone ratios on the kind cluster equal the scenario's exactly.
    pub fn is_exact(&self) -> bool {
        matches!(self.mode, Mode::Exact { .. })
    }

    /// Whether values are changed at all.
    pub fn is_identity(&self) -> bool {
        matches!(
            self.mode,
            Mode::Exact {
                numerator,
                denominator
            } if numerator == denominator
        )
    }

    /// The allocatable millicores a node with `scenario_millicpu` gets on the host.
    pub fn allocatable(&self, scenario_millicpu: u64) -> u64 {
        let scaled = match self.mode {
            Mode::Exact {
                numerator,
                denominator,
            } => mul_div(scenario_millicpu, numerator, denominator),
            Mode::Rounded { largest } => mul_div(scenario_millicpu, self.host_millicpu, largest),
        };
        scaled.min(self.host_millicpu)
    }

    /// The CPU to reserve (`kube-reserved`) so the node's allocatable is
    /// [`CpuScale::allocatable`]`(scenario_millicpu)`.
    pub fn reserved(&self, scenario_millicpu: u64) -> u64 {
        self.host_millicpu - self.allocatable(scenario_millicpu)
    }
}

impl fmt::Display for CpuScale {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.mode {
            Mode::Exact {
                numerator,
                denominator,
            } if numerator == denominator => write!(f, "1 (the host holds the largest node)"),
            Mode::Exact {
                numerator,
                denominator,
            } => {
                let common = gcd(numerator, denominator);
                write!(
                    f,
                    "{}/{} = {:.6} (zone ratios exact)",
                    numerator / common,
                    denominator / common,
                    self.factor()
                )
            }
            Mode::Rounded { .. } => write!(
                f,
                "{:.6} (rounded down to whole millicores: zone ratios approximate)",
                self.factor()
            ),
        }
    }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// `floor(a * b / c)` without overflow for any u64 inputs (c > 0).
fn mul_div(a: u64, b: u64, c: u64) -> u64 {
    (u128::from(a) * u128::from(b) / u128::from(c)) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_larger_than_every_node_keeps_the_values() {
        let scale = CpuScale::for_values(&[4000, 8000], 8);
        assert!(scale.is_identity());
        assert_eq!(scale.allocatable(4000), 4000);
        assert_eq!(scale.reserved(4000), 4000);
        assert_eq!(scale.reserved(8000), 0);
    }

    #[test]
    fn small_host_scales_by_the_largest_common_step() {
        // 4 and 8 CPUs on 3 CPUs: g = 4000, u = 1, 2; s = 1500.
        let scale = CpuScale::for_values(&[4000, 8000], 3);
        assert!(scale.is_exact());
        assert_eq!(scale.allocatable(4000), 1500);
        assert_eq!(scale.allocatable(8000), 3000);
        assert_eq!(scale.factor(), 0.375);
        // 3 and 7 CPUs on 2 CPUs: u = 3, 7; s = floor(2000 / 7) = 285.
        let scale = CpuScale::for_values(&[3000, 7000], 2);
        assert_eq!(scale.allocatable(3000), 855);
        assert_eq!(scale.allocatable(7000), 1995);
    }

    #[test]
    fn coprime_values_beyond_the_host_are_rounded_and_say_so() {
        let scale = CpuScale::for_values(&[4001, 8000], 2);
        assert!(!scale.is_exact());
        assert_eq!(scale.allocatable(8000), 2000);
        assert_eq!(scale.allocatable(4001), 1000);
        assert!(scale.to_string().contains("approximate"));
    }
}
