//! Host memory near the GPU: before a sweep allocates its host buffers,
//! the calling thread is bound to the CPUs sysfs lists as the GPU's local
//! ones (`/sys/bus/pci/devices/<bus id>/local_cpulist`), so first touch
//! places the buffers on the GPU's NUMA node, as nvbandwidth does (it binds
//! through NVML's `nvmlDeviceSetCpuAffinity`). The binding, or why there
//! was none, is recorded in the cells' path; the thread's CPUs are restored
//! after the sweep.

/// A thread binding to undo.
pub(super) struct Binding {
    /// `host buffers allocated by a thread bound to CPUs 0-31 (the GPU's
    /// local CPUs, NUMA node 0)`, or why they were not.
    pub note: String,
    previous: Option<libc::cpu_set_t>,
}

impl Binding {
    /// Gives the thread back the CPUs it had.
    pub fn restore(self) -> Result<(), String> {
        let Some(set) = self.previous else {
            return Ok(());
        };
        // SAFETY: `set` is a cpu_set_t read by sched_getaffinity.
        let r = unsafe { libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) };
        if r == 0 {
            Ok(())
        } else {
            Err(format!(
                "could not restore the thread's CPUs after binding it near the GPU: {}",
                std::io::Error::last_os_error()
            ))
        }
    }
}

/// The sysfs name of a PCI bus id: four hex digits of domain
/// (`00000000:1A:00.0` -> `0000:1a:00.0`).
fn sysfs_name(bus_id: &str) -> String {
    let id = bus_id.trim().to_ascii_lowercase();
    match id.split_once(':') {
        Some((dom, rest)) if dom.len() > 4 => format!("{}:{rest}", &dom[dom.len() - 4..]),
        _ => id,
    }
}

/// The CPUs of a sysfs cpulist (`0-31,64-95`); `None` when unreadable.
/// CPUs at or past `CPU_SETSIZE` are ignored.
pub(super) fn parse_cpulist(text: &str) -> Option<Vec<usize>> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        let (a, b) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let n: usize = part.trim().parse().ok()?;
                (n, n)
            }
        };
        if a > b {
            return None;
        }
        cpus.extend((a..=b.min(libc::CPU_SETSIZE as usize - 1)).take_while(|c| *c >= a));
    }
    (!cpus.is_empty()).then_some(cpus)
}

/// Binds the calling thread near the GPU at `bus_id`.
pub(super) fn near(bus_id: &str) -> Binding {
    let dir = std::path::Path::new("/sys/bus/pci/devices").join(sysfs_name(bus_id));
    let list = dir.join("local_cpulist");
    let unbound = |why: String| Binding {
        note: format!("host buffers not bound near the GPU: {why}"),
        previous: None,
    };
    let text = match std::fs::read_to_string(&list) {
        Ok(t) => t,
        Err(e) => return unbound(format!("`{}`: {e}", list.display())),
    };
    let Some(cpus) = parse_cpulist(&text) else {
        return unbound(format!("`{}` reads {:?}", list.display(), text.trim()));
    };
    let node = std::fs::read_to_string(dir.join("numa_node"))
        .map(|n| n.trim().to_string())
        .unwrap_or_else(|_| "not readable".into());
    // SAFETY: cpu_set_t is plain data; the calls get its exact size.
    unsafe {
        let mut previous: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size_of::<libc::cpu_set_t>(), &mut previous) != 0 {
            return unbound(format!(
                "sched_getaffinity: {}",
                std::io::Error::last_os_error()
            ));
        }
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for c in &cpus {
            libc::CPU_SET(*c, &mut set);
        }
        if libc::sched_setaffinity(0, size_of::<libc::cpu_set_t>(), &set) != 0 {
            return unbound(format!(
                "sched_setaffinity to CPUs {}: {}",
                text.trim(),
                std::io::Error::last_os_error()
            ));
        }
        Binding {
            note: format!(
                "host buffers allocated and first touched by a thread bound to CPUs {} (the GPU's local CPUs, NUMA node {node})",
                text.trim()
            ),
            previous: Some(previous),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpulists_and_bus_ids_read_as_sysfs_writes_them() {
        assert_eq!(
            parse_cpulist("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpulist(""), None);
        assert_eq!(parse_cpulist("3-1"), None);
        assert_eq!(parse_cpulist("x"), None);
        assert_eq!(sysfs_name("00000000:1A:00.0"), "0000:1a:00.0");
        assert_eq!(sysfs_name("0000:1a:00.0"), "0000:1a:00.0");
    }

    #[test]
    fn a_gpu_sysfs_does_not_list_is_not_bound_and_says_why() {
        let b = near("0000:ff:1f.7-not-a-device");
        assert!(
            b.note
                .starts_with("host buffers not bound near the GPU: `/sys/bus/pci/devices/"),
            "{}",
            b.note
        );
        assert!(b.restore().is_ok());
    }
}
