//! RDMA devices through libibverbs (rdma-sys, feature `rdma`): the device
//! list, device and port attributes and GIDs, as the verbs layer itself
//! reports them, to merge with what sysfs and the tools said. Opens each
//! device read-only for queries and closes it; creates no queue pair.

use std::ffi::CStr;

use rdma_sys as ib;

use crate::evidence::Source;
use crate::evidence::rdma::{Gid, RdmaDevice, RdmaPort};

/// `4X` and the like from `active_width` (IB spec: 1, 2, 4, 8, 16 ->
/// 1X, 4X, 8X, 12X, 2X).
fn width(w: u8) -> String {
    match w {
        1 => "1X",
        2 => "4X",
        4 => "8X",
        8 => "12X",
        16 => "2X",
        _ => "unknown width",
    }
    .into()
}

/// Speed name and per-lane data rate in Gb/s from `active_speed` (or, when
/// the library fills it, `active_speed_ex`, which alone can say XDR).
fn speed(s: u32) -> (&'static str, f64) {
    match s {
        1 => ("SDR", 2.0),
        2 => ("DDR", 4.0),
        4 => ("QDR", 8.0),
        8 => ("FDR10", 10.0),
        16 => ("FDR", 13.64),
        32 => ("EDR", 25.0),
        64 => ("HDR", 50.0),
        128 => ("NDR", 100.0),
        256 => ("XDR", 200.0),
        _ => ("unknown speed", 0.0),
    }
}

fn lanes(w: u8) -> f64 {
    match w {
        1 => 1.0,
        2 => 4.0,
        4 => 8.0,
        8 => 12.0,
        16 => 2.0,
        _ => 0.0,
    }
}

/// Every device libibverbs lists. `Err` when the list itself cannot be had
/// (no RDMA in the kernel, no provider).
pub fn devices() -> Result<Vec<RdmaDevice>, String> {
    let list = DeviceList::get()?;
    Ok(list.devices().map(device).collect())
}

fn libibverbs() -> Source {
    Source {
        file: "libibverbs".into(),
        line: 1,
    }
}

/// One device: its name, and what an open context says of it and its
/// ports (the transport says why when it cannot be opened).
fn device(dev: Device<'_>) -> RdmaDevice {
    let mut d = RdmaDevice::new(dev.name(), libibverbs());
    let ctx = match Context::open(dev) {
        Ok(ctx) => ctx,
        Err(e) => {
            d.transport = Some(format!("could not be opened: {e}"));
            return d;
        }
    };
    let Some(attr) = ctx.query_device() else {
        return d;
    };
    // SAFETY: fw_ver is a NUL-terminated char array.
    d.firmware = Some(
        unsafe { CStr::from_ptr(attr.fw_ver.as_ptr()) }
            .to_string_lossy()
            .into_owned(),
    );
    let g = u64::from_be(attr.node_guid);
    d.node_guid = Some(format!(
        "{:04x}:{:04x}:{:04x}:{:04x}",
        g >> 48,
        (g >> 32) & 0xffff,
        (g >> 16) & 0xffff,
        g & 0xffff
    ));
    for port in 1..=attr.phys_port_cnt {
        if let Some(pa) = ctx.query_port(port) {
            d.ports.push(port_of(&ctx, port, &pa));
        }
    }
    d
}

/// GID entries read per port at most (the table's own length otherwise:
/// RoCE ports list one entry per address and version, often more than 16).
const MAX_GIDS: i32 = 1024;

/// `ibv_port_attr` as rdma-core v47 and later lay it out: the same fields,
/// then `active_speed_ex` (at offset 52), the only place an XDR port's
/// speed is reported. Older libraries leave it zero.
#[repr(C)]
#[derive(Clone, Copy)]
struct PortAttrEx {
    base: ib::ibv_port_attr,
    active_speed_ex: u32,
}

/// The `query_port` op of a `verbs_context`.
type QueryPort =
    unsafe extern "C" fn(*mut ib::ibv_context, u8, *mut ib::ibv_port_attr, usize) -> i32;

/// A port as `ibv_query_port` describes it, with its non-zero GIDs.
fn port_of(ctx: &Context, port: u8, pa: &PortAttrEx) -> RdmaPort {
    let (ex, pa) = (pa.active_speed_ex, &pa.base);
    let code = if ex != 0 {
        ex
    } else {
        u32::from(pa.active_speed)
    };
    let (sname, per_lane) = speed(code);
    let rate = per_lane * lanes(pa.active_width);
    let active = pa.state == ib::ibv_port_state::IBV_PORT_ACTIVE;
    RdmaPort {
        port: u32::from(port),
        state: Some(format!(
            "{} ({})",
            if active { "PORT_ACTIVE" } else { "not active" },
            pa.state
        )),
        active: Some(active),
        physical_state: Some(format!("{}", pa.phys_state)),
        link_up: Some(pa.phys_state == 5),
        rate_bytes_per_s: (rate > 0.0).then_some(rate * 1.25e8),
        rate_as_printed: Some(format!(
            "{rate} Gb/s ({} {sname}, from ibv_query_port{})",
            width(pa.active_width),
            if ex != 0 { ", active_speed_ex" } else { "" }
        )),
        width: Some(width(pa.active_width)),
        speed: Some(sname.into()),
        active_mtu_bytes: (1..=5)
            .contains(&pa.active_mtu)
            .then(|| 128u32 << pa.active_mtu),
        max_mtu_bytes: (1..=5).contains(&pa.max_mtu).then(|| 128u32 << pa.max_mtu),
        link_layer: Some(match pa.link_layer {
            1 => "InfiniBand".into(),
            2 => "Ethernet".into(),
            x => format!("unspecified ({x})"),
        }),
        lid: Some(format!("0x{:x}", pa.lid)),
        sm_lid: Some(format!("0x{:x}", pa.sm_lid)),
        gids: (0..pa.gid_tbl_len.clamp(0, MAX_GIDS))
            .filter_map(|idx| ctx.gid(port, idx))
            .collect(),
        source: libibverbs(),
        ..RdmaPort::default()
    }
}

/// The list `ibv_get_device_list` returns, freed when dropped.
struct DeviceList {
    list: *mut *mut ib::ibv_device,
    len: usize,
}

/// A device of a [`DeviceList`], valid while the list is.
#[derive(Clone, Copy)]
struct Device<'a> {
    dev: *mut ib::ibv_device,
    _list: std::marker::PhantomData<&'a DeviceList>,
}

impl DeviceList {
    fn get() -> Result<DeviceList, String> {
        let mut n = 0;
        // SAFETY: valid out-pointer; the list is freed on drop.
        let list = unsafe { ib::ibv_get_device_list(&mut n) };
        if list.is_null() {
            return Err(format!(
                "ibv_get_device_list: {}",
                std::io::Error::last_os_error()
            ));
        }
        Ok(DeviceList {
            list,
            len: n.max(0) as usize,
        })
    }

    fn devices(&self) -> impl Iterator<Item = Device<'_>> {
        (0..self.len).map(|i| Device {
            // SAFETY: `list` holds `len` device pointers.
            dev: unsafe { *self.list.add(i) },
            _list: std::marker::PhantomData,
        })
    }
}

impl Drop for DeviceList {
    fn drop(&mut self) {
        // SAFETY: returned by ibv_get_device_list, freed once.
        unsafe { ib::ibv_free_device_list(self.list) };
    }
}

impl Device<'_> {
    fn name(self) -> String {
        // SAFETY: a device from the list has a NUL-terminated name.
        unsafe { CStr::from_ptr(ib::ibv_get_device_name(self.dev)) }
            .to_string_lossy()
            .into_owned()
    }
}

/// A device opened for queries, closed when dropped.
struct Context(*mut ib::ibv_context);

impl Context {
    fn open(dev: Device<'_>) -> Result<Context, std::io::Error> {
        // SAFETY: a device of a live list; closed on drop.
        let ctx = unsafe { ib::ibv_open_device(dev.dev) };
        if ctx.is_null() {
            Err(std::io::Error::last_os_error())
        } else {
            Ok(Context(ctx))
        }
    }

    fn query_device(&self) -> Option<ib::ibv_device_attr> {
        // SAFETY: a zeroed attribute struct is a valid out-buffer.
        let mut attr: ib::ibv_device_attr = unsafe { std::mem::zeroed() };
        (unsafe { ib::ibv_query_device(self.0, &mut attr) } == 0).then_some(attr)
    }

    /// The port's attributes through the extended query (the
    /// `verbs_context` op `ibv_query_port` is an inline wrapper of, with the
    /// size of [`PortAttrEx`], so a new library fills `active_speed_ex`);
    /// the exported compat call when the context has no such op.
    fn query_port(&self, port: u8) -> Option<PortAttrEx> {
        // SAFETY: a zeroed attribute struct is a valid out-buffer.
        let mut pa: PortAttrEx = unsafe { std::mem::zeroed() };
        let out = &mut pa as *mut PortAttrEx;
        // SAFETY: as rdma-core's inline ibv_query_port: the op fills at
        // most the length given; the compat call fills a prefix.
        let rc = unsafe {
            match self.query_port_op() {
                Some(op) => op(
                    self.0,
                    port,
                    out as *mut ib::ibv_port_attr,
                    size_of::<PortAttrEx>(),
                ),
                None => ib::ibv_query_port(self.0, port, out as *mut ib::_compat_ibv_port_attr),
            }
        };
        (rc == 0).then_some(pa)
    }

    /// The `query_port` op of the context's `verbs_context`, if it has one:
    /// a context whose `abi_compat` is all ones sits inside a
    /// `verbs_context`, whose `sz` says which ops it has (rdma-core's
    /// `verbs_get_ctx_op`).
    fn query_port_op(&self) -> Option<QueryPort> {
        // SAFETY: `self.0` is an open context; the verbs_context around it
        // is read only after abi_compat says it is there.
        unsafe {
            if (*self.0).abi_compat as usize != u32::MAX as usize {
                return None;
            }
            let at = std::mem::offset_of!(ib::verbs_context, context);
            let vc = (self.0 as *mut u8).sub(at) as *const ib::verbs_context;
            let need = size_of::<ib::verbs_context>()
                - std::mem::offset_of!(ib::verbs_context, query_port);
            if (*vc).sz < need {
                return None;
            }
            (*vc).query_port
        }
    }

    /// GID `idx` of `port` as eight colon-separated groups; `None` when it
    /// cannot be read or is all zeros (an unused entry).
    fn gid(&self, port: u8, idx: i32) -> Option<Gid> {
        let mut gid: ib::ibv_gid = unsafe { std::mem::zeroed() };
        if unsafe { ib::ibv_query_gid(self.0, port, idx, &mut gid) } != 0 {
            return None;
        }
        // SAFETY: the union's raw view is always valid bytes.
        let raw = unsafe { gid.raw };
        if raw.iter().all(|b| *b == 0) {
            return None;
        }
        let text = raw
            .chunks(2)
            .map(|c| format!("{:02x}{:02x}", c[0], c[1]))
            .collect::<Vec<_>>()
            .join(":");
        Some(Gid {
            index: idx as u32,
            gid: text,
            ipv4: None,
            version: None,
            netdev: None,
        })
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: opened by Context::open, closed once.
        unsafe { ib::ibv_close_device(self.0) };
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_device_list_is_a_clean_answer() {
        // CI has libibverbs and no RDMA hardware: an empty list or a clean error.
        match super::devices() {
            Ok(devs) => assert!(devs.iter().all(|d| !d.name.is_empty())),
            Err(e) => assert!(e.starts_with("ibv_get_device_list"), "{e}"),
        }
    }

    #[test]
    fn decodes_width_and_speed_codes() {
        assert_eq!(super::width(2), "4X");
        assert_eq!(super::speed(64), ("HDR", 50.0));
        assert_eq!(super::speed(256), ("XDR", 200.0));
        // rdma-core v47's layout: active_speed_ex right after the 52 bytes.
        assert_eq!(std::mem::offset_of!(super::PortAttrEx, active_speed_ex), 52);
        assert_eq!(super::lanes(2) * super::speed(128).1, 400.0);
    }
}
