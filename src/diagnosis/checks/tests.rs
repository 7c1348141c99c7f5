use super::*;
use crate::bundle::{Host, Origin};

fn empty(origin: Origin) -> Bundle {
    Bundle::new(Host {
        name: "n".into(),
        origin,
    })
}

fn state(checks: &[Check], step: Step) -> State {
    checks.iter().find(|c| c.step == step).unwrap().state
}

#[test]
fn an_empty_ingested_node_is_incomplete_not_ok() {
    let b = empty(Origin::Ingested);
    let facts = NodeFacts::of(&b);
    let c = checks(&b, &facts, &[]);
    assert_eq!(c.len(), STEPS.len());
    assert_eq!(state(&c, Step::GpuLinks), State::NotChecked);
    assert_eq!(state(&c, Step::RdmaPorts), State::NotChecked);
    assert_eq!(state(&c, Step::Results), State::NotApplicable);
    assert_eq!(Verdict::of(&[], &c), Verdict::Incomplete);
    let needs = c.iter().find(|c| c.step == Step::GpuLinks).unwrap().needs;
    assert!(needs.unwrap().contains("nvidia-smi topo -m"));
}

#[test]
fn a_live_node_without_devices_has_nothing_to_check_and_is_ok() {
    let b = empty(Origin::Live);
    let facts = NodeFacts::of(&b);
    let c = checks(&b, &facts, &[]);
    assert!(
        c.iter()
            .all(|c| matches!(c.state, State::NotApplicable | State::NotChecked)),
        "{c:?}"
    );
    // The process ran (live): its binding is checkable, and here unread.
    assert_eq!(state(&c, Step::Affinity), State::NotChecked);
    assert_eq!(state(&c, Step::GpuLinks), State::NotApplicable);
    assert_eq!(state(&c, Step::Counters), State::NotApplicable);
}

#[test]
fn a_benchmark_on_one_gpu_does_not_make_a_one_gpu_node() {
    use crate::evidence::measurement::{Kind, Measurement, Statistic};
    // `GPU 7` alone (an nvbandwidth run on one device): the node has at
    // least eight, so its pairs are not known, not absent.
    let mut b = empty(Origin::Ingested);
    let mut m = Measurement::new("nvbandwidth", 3, Kind::H2d, "t", Statistic::Median);
    m.dst = Some("GPU7".into());
    m.bandwidth_bytes_per_s = Some(50e9);
    b.measurements.push(m);
    let facts = NodeFacts::of(&b);
    let c = checks(&b, &facts, &[]);
    assert_eq!(state(&c, Step::GpuLinks), State::NotChecked);
    assert_eq!(state(&c, Step::PeerPath), State::NotChecked);
    // A topology that lists one GPU is a listing: no pair to check.
    let mut one = empty(Origin::Ingested);
    one.topology
        .devices
        .push(crate::evidence::topology::Device::new(
            "GPU0",
            crate::evidence::topology::DeviceKind::Gpu,
            crate::evidence::Source::line(1),
        ));
    let facts = NodeFacts::of(&one);
    assert_eq!(
        state(&checks(&one, &facts, &[]), Step::GpuLinks),
        State::NotApplicable
    );
}

#[test]
fn step_ids_are_unique_and_each_step_has_one_definition() {
    let ids: std::collections::BTreeSet<_> = STEPS.iter().map(|s| s.id).collect();
    assert_eq!(ids.len(), STEPS.len());
    for d in &STEPS {
        assert_eq!(d.step.def().id, d.id);
    }
}
