//! v0.16's dynamic updates: a backend has server slots in multiples of
//! `backend-server-slots-increment`; empty slots are rendered disabled. An endpoint change is
//! applied through HAProxy's runtime API (`set server BACKEND/SERVER addr … port …`, `set
//! server … state ready|maint`) while the slots suffice — endpoints that stay keep their slot,
//! removed ones leave theirs empty, new ones take the first empty slots — and only a change
//! that needs more slots re-renders and reloads (haproxy-ingress docs, `dynamic-scaling`:
//! "will only force a reloading of HAProxy if the number of servers on a backend need to be
//! increased").

use super::ServerEntry;

/// The backend's slots: `Some` holds an endpoint, `None` is an empty (disabled) slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotPlan {
    pub slots: Vec<Option<ServerEntry>>,
}

impl SlotPlan {
    /// The endpoints in slot order.
    pub fn servers(&self) -> impl Iterator<Item = &ServerEntry> {
        self.slots.iter().flatten()
    }
}

/// One slot's new content, applied through the runtime API.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotChange {
    /// 0-based slot index (server `srv{slot+1:03}`).
    pub slot: usize,
    /// `None`: the slot is emptied (`state maint`).
    pub server: Option<ServerEntry>,
}

/// How an endpoint change reaches HAProxy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SlotUpdate {
    /// Nothing changed.
    Unchanged,
    /// Through the runtime API; no reload.
    Runtime {
        plan: SlotPlan,
        changes: Vec<SlotChange>,
    },
    /// More slots are needed: a new configuration and a reload.
    Reload(SlotPlan),
}

/// A fresh backend for `servers` (in render order): the smallest multiple of `increment`
/// (at least one increment) that holds them.
pub fn plan_slots(servers: &[ServerEntry], increment: u32) -> SlotPlan {
    let inc = increment.max(1) as usize;
    let size = servers.len().div_ceil(inc).max(1) * inc;
    let mut slots: Vec<Option<ServerEntry>> = servers.iter().cloned().map(Some).collect();
    slots.resize(size, None);
    SlotPlan { slots }
}

/// How `current` becomes `desired` (in render order).
pub fn update_slots(current: &SlotPlan, desired: &[ServerEntry], increment: u32) -> SlotUpdate {
    let mut slots = current.slots.clone();
    let mut changes = Vec::new();
    for (i, slot) in slots.iter_mut().enumerate() {
        if slot.as_ref().is_some_and(|s| !desired.contains(s)) {
            *slot = None;
            changes.push(SlotChange {
                slot: i,
                server: None,
            });
        }
    }
    let added: Vec<&ServerEntry> = desired
        .iter()
        .filter(|d| !current.slots.iter().flatten().any(|s| s == *d))
        .collect();
    let empty = slots.iter().filter(|s| s.is_none()).count();
    if added.len() > empty {
        return SlotUpdate::Reload(plan_slots(desired, increment));
    }
    let mut free = (0..slots.len())
        .filter(|i| slots[*i].is_none())
        .collect::<Vec<_>>();
    free.reverse();
    for server in added {
        let i = free.pop().expect("counted above");
        slots[i] = Some(server.clone());
        // Replaces an emptying of the same slot, if any.
        changes.retain(|c| c.slot != i);
        changes.push(SlotChange {
            slot: i,
            server: Some(server.clone()),
        });
    }
    if changes.is_empty() {
        return SlotUpdate::Unchanged;
    }
    changes.sort_by_key(|c| c.slot);
    SlotUpdate::Runtime {
        plan: SlotPlan { slots },
        changes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn e(pod: u8) -> ServerEntry {
        ServerEntry {
            pod: format!("pod-{pod}"),
            ip: Ipv4Addr::new(10, 244, 0, pod + 2),
            port: 8080,
        }
    }

    #[test]
    fn slots_come_in_increments_and_empty_ones_are_disabled() {
        let plan = plan_slots(&[e(0), e(1), e(2)], 4);
        assert_eq!(plan.slots.len(), 4);
        assert_eq!(plan.slots[3], None);
        assert_eq!(
            plan_slots(&[e(0), e(1), e(2), e(3), e(4)], 4).slots.len(),
            8
        );
        assert_eq!(plan_slots(&[], 4).slots.len(), 4);
    }

    #[test]
    fn a_removal_and_an_addition_go_through_the_runtime_api_keeping_the_others_in_place() {
        let plan = plan_slots(&[e(0), e(1), e(2)], 4);
        // pod-1 leaves: its slot is emptied, nobody moves.
        let SlotUpdate::Runtime { plan, changes } = update_slots(&plan, &[e(0), e(2)], 4) else {
            panic!("a removal needs no reload");
        };
        assert_eq!(
            changes,
            [SlotChange {
                slot: 1,
                server: None
            }]
        );
        assert_eq!(plan.slots[2], Some(e(2)));
        // pod-1 comes back and pod-3 is new: the first empty slots, 1 then 3.
        let SlotUpdate::Runtime { plan, changes } =
            update_slots(&plan, &[e(0), e(1), e(2), e(3)], 4)
        else {
            panic!("two free slots hold two additions");
        };
        assert_eq!(
            changes,
            [
                SlotChange {
                    slot: 1,
                    server: Some(e(1))
                },
                SlotChange {
                    slot: 3,
                    server: Some(e(3))
                }
            ]
        );
        assert_eq!(
            update_slots(&plan, &[e(0), e(1), e(2), e(3)], 4),
            SlotUpdate::Unchanged
        );
        // A fifth endpoint needs a fifth slot: reload with two increments.
        let SlotUpdate::Reload(grown) = update_slots(&plan, &[e(0), e(1), e(2), e(3), e(4)], 4)
        else {
            panic!("more endpoints than slots reload");
        };
        assert_eq!(grown.slots.len(), 8);
        assert_eq!(grown.servers().count(), 5);
    }
}
