//! Injection ceiling (seed section 3.6): a node's network adapters, not its
//! GPUs, set how fast it can put bytes on the network. With `n_nic`
//! adapters of `B_nic` each shared by `n_gpu` GPUs, each GPU gets
//! `n_nic * B_nic / n_gpu`, to be compared with what the same GPU has to
//! its neighbours over the scale-up link.

use serde::Serialize;

use super::{ModelError, positive};

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Injection {
    pub gpus_per_node: u32,
    pub nics_per_node: u32,
    pub nic_bytes_per_s: f64,
    pub scaleup_bytes_per_s: f64,
    /// `n_nic * B_nic`.
    pub node_injection_bytes_per_s: f64,
    /// `n_nic * B_nic / n_gpu`.
    pub per_gpu_bytes_per_s: f64,
    /// Per-GPU share over the scale-up bandwidth: how far down the cliff a
    /// GPU falls when its traffic leaves the node.
    pub ratio_to_scaleup: f64,
}

fn counts(n_nic: u32, n_gpu: u32) -> Result<(), ModelError> {
    if n_nic == 0 {
        return Err(ModelError::Undefined(
            "a node with zero network adapters has no injection bandwidth: the ceiling is undefined".into(),
        ));
    }
    if n_gpu == 0 {
        return Err(ModelError::Undefined(
            "GPUs per node must be at least 1".into(),
        ));
    }
    Ok(())
}

/// The per-GPU share and its ratio to the scale-up bandwidth.
pub fn injection(
    n_gpu: u32,
    n_nic: u32,
    nic_bytes_per_s: f64,
    scaleup_bytes_per_s: f64,
) -> Result<Injection, ModelError> {
    counts(n_nic, n_gpu)?;
    positive("adapter bandwidth (bytes/s)", nic_bytes_per_s)?;
    positive("scale-up bandwidth (bytes/s)", scaleup_bytes_per_s)?;
    let node = f64::from(n_nic) * nic_bytes_per_s;
    let per_gpu = node / f64::from(n_gpu);
    Ok(Injection {
        gpus_per_node: n_gpu,
        nics_per_node: n_nic,
        nic_bytes_per_s,
        scaleup_bytes_per_s,
        node_injection_bytes_per_s: node,
        per_gpu_bytes_per_s: per_gpu,
        ratio_to_scaleup: per_gpu / scaleup_bytes_per_s,
    })
}

/// The fewest adapters that give each GPU at least `target_ratio` of the
/// scale-up bandwidth: `ceil(target * B_scaleup * n_gpu / B_nic)`.
pub fn min_nics_for_ratio(
    n_gpu: u32,
    nic_bytes_per_s: f64,
    scaleup_bytes_per_s: f64,
    target_ratio: f64,
) -> Result<u32, ModelError> {
    counts(1, n_gpu)?;
    positive("adapter bandwidth (bytes/s)", nic_bytes_per_s)?;
    positive("scale-up bandwidth (bytes/s)", scaleup_bytes_per_s)?;
    positive("target ratio", target_ratio)?;
    let need = target_ratio * scaleup_bytes_per_s * f64::from(n_gpu) / nic_bytes_per_s;
    // Guard against 2.0000000001 from rounding: a tiny relative slack.
    let n = (need * (1.0 - 1e-12)).ceil().max(1.0);
    if n > f64::from(u32::MAX) {
        return Err(ModelError::Undefined(format!(
            "{need:.3e} adapters would be needed"
        )));
    }
    Ok(n as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn one_adapter_for_eight_gpus_is_two_orders_below_scale_up() {
        // The seed's lab: 8 GPUs, 1 adapter of 25 GB/s, scale-up 400 GB/s.
        let i = injection(8, 1, 25e9, 400e9).unwrap();
        assert_eq!(i.node_injection_bytes_per_s, 25e9);
        assert_eq!(i.per_gpu_bytes_per_s, 3.125e9);
        assert_eq!(i.ratio_to_scaleup, 3.125e9 / 400e9);
        let i8 = injection(8, 8, 25e9, 400e9).unwrap();
        assert_eq!(i8.per_gpu_bytes_per_s, 25e9);
        assert_eq!(min_nics_for_ratio(8, 25e9, 400e9, 0.0625).unwrap(), 8);
        assert_eq!(min_nics_for_ratio(8, 25e9, 400e9, 0.07).unwrap(), 9);
    }

    #[test]
    fn zero_adapters_is_a_defined_error() {
        let e = injection(8, 0, 25e9, 400e9).unwrap_err();
        assert!(e.to_string().contains("zero network adapters"), "{e}");
        assert!(injection(0, 1, 25e9, 400e9).is_err());
        assert!(injection(8, 1, 0.0, 400e9).is_err());
    }

    proptest! {
        #[test]
        fn linear_in_adapters(n_gpu in 1u32..64, n_nic in 1u32..64, k in 1u32..8, b in 1e9f64..1e12, s in 1e9f64..1e13) {
            let one = injection(n_gpu, n_nic, b, s).unwrap();
            let more = injection(n_gpu, n_nic * k, b, s).unwrap();
            let r = more.per_gpu_bytes_per_s / one.per_gpu_bytes_per_s;
            prop_assert!((r - f64::from(k)).abs() < 1e-9 * f64::from(k));
        }

        #[test]
        fn inversely_proportional_to_gpus(n_gpu in 1u32..64, n_nic in 1u32..64, k in 1u32..8, b in 1e9f64..1e12, s in 1e9f64..1e13) {
            let one = injection(n_gpu, n_nic, b, s).unwrap();
            let more = injection(n_gpu * k, n_nic, b, s).unwrap();
            let r = one.per_gpu_bytes_per_s / more.per_gpu_bytes_per_s;
            prop_assert!((r - f64::from(k)).abs() < 1e-9 * f64::from(k));
        }

        #[test]
        fn one_adapter_per_gpu_makes_the_ratio_independent_of_gpu_count(n in 1u32..128, m in 1u32..128, b in 1e9f64..1e12, s in 1e9f64..1e13) {
            let a = injection(n, n, b, s).unwrap();
            let c = injection(m, m, b, s).unwrap();
            prop_assert!((a.ratio_to_scaleup - c.ratio_to_scaleup).abs() <= 1e-12 * a.ratio_to_scaleup.abs());
            prop_assert!((a.ratio_to_scaleup - b / s).abs() <= 1e-12 * (b / s));
        }

        #[test]
        fn min_nics_reaches_the_target(n_gpu in 1u32..64, b in 1e9f64..1e12, s in 1e9f64..1e13, t in 0.001f64..2.0) {
            let n = min_nics_for_ratio(n_gpu, b, s, t).unwrap();
            let got = injection(n_gpu, n, b, s).unwrap().ratio_to_scaleup;
            prop_assert!(got >= t * (1.0 - 1e-9));
            if n > 1 {
                let less = injection(n_gpu, n - 1, b, s).unwrap().ratio_to_scaleup;
                prop_assert!(less < t * (1.0 + 1e-9));
            }
        }
    }
}
