//! The sentence of `process-far-from-gpu`: who bound the process where,
//! which devices it left out of reach, and what was assumed to say so.

fn nodes(v: &[u32]) -> String {
    v.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
}

pub(super) fn process_far(
    (gpus, gpu_nodes, nics, near): (&[String], &[u32], &[String], usize),
    (cpus, cpu_nodes, mem_nodes): (Option<&str>, &[u32], &[u32]),
    (command, node_zero_assumed): (Option<&str>, bool),
) -> String {
    let who = match command {
        Some(c) => format!("`{c}` bound the process"),
        None => "This collection's process was bound".to_string(),
    };
    let mut to = Vec::new();
    if let Some(c) = cpus {
        to.push(format!("to CPUs {c}"));
    }
    if !cpu_nodes.is_empty() {
        to.push(format!("to the CPUs of NUMA node(s) {}", nodes(cpu_nodes)));
    }
    if !mem_nodes.is_empty() {
        to.push(format!("to memory on node(s) {}", nodes(mem_nodes)));
    }
    // A binding by node against a CPU affinity without a node
    // (`facts::affinity::node_zero_far`): say what was assumed.
    let assumed = "by its CPU affinity, taking the node that holds CPU 0 (the boot CPU) to be node 0 as Linux numbers it on common servers (the topology gives no NUMA node)";
    let at = match (gpu_nodes.is_empty(), node_zero_assumed) {
        (false, false) => format!("on NUMA node(s) {}", nodes(gpu_nodes)),
        (false, true) => format!(
            "on NUMA node(s) {} or off those node(s) {assumed}",
            nodes(gpu_nodes)
        ),
        (true, true) => format!("off those node(s) {assumed}"),
        (true, false) => "outside those CPUs' reach (CPU affinity)".to_string(),
    };
    let near = if near > 0 {
        format!(" ({near} other device(s) it used are near)")
    } else {
        String::new()
    };
    let mut far = Vec::new();
    if !gpus.is_empty() {
        let label = if gpus.len() == 1 { "GPU" } else { "GPUs" };
        far.push(format!("{label} {} {at}", gpus.join(", ")));
    }
    if !nics.is_empty() {
        far.push(format!("adapter(s) {} out of reach too", nics.join(", ")));
    }
    format!(
        "{who} {}; {}{near}: its host buffers and staged copies cross the socket link.",
        to.join(" and "),
        far.join("; ")
    )
}
