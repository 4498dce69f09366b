//! From resolved scenario settings to a world and its applications: what
//! runs and which hosts it needs come from `scenario::assemble`; this
//! module only makes each planned host as a simulated host and its paths.

use crate::timers::AppTimers;
use crate::topology::{Host, EPHEMERAL_FIRST};
use crate::world::World;
use net::fabric::Fabric;
use net::monitor;
use rundir::TcpTotals;
use scenario::{Resolved, Side};
use traffic::plan::HostPlan;
use traffic::{App, HostId};

pub use net::fabric::{BOTTLENECK_FWD, BOTTLENECK_REV};

pub struct Built {
    pub world: World,
    pub apps: Vec<Box<dyn App>>,
    pub app_names: Vec<String>,
}

struct Builder {
    world: World,
    side_count: [u32; 2],
}

impl Builder {
    /// The index of TCP settings `c`, each distinct one kept once.
    fn tcp_cfg(&mut self, c: &tcp::TcpConfig) -> u32 {
        match self.world.tcp_cfgs.iter().position(|x| **x == *c) {
            Some(i) => i as u32,
            None => {
                self.world.tcp_cfgs.push(std::sync::Arc::new(c.clone()));
                (self.world.tcp_cfgs.len() - 1) as u32
            }
        }
    }
}

impl scenario::Hosts for Builder {
    fn next_host(&self) -> HostId {
        self.world.hosts.len() as HostId
    }

    /// Makes a planned host: its paths and routes (the fabric's), its TCP
    /// settings and address (the world's).
    fn host(&mut self, p: &HostPlan) -> HostId {
        let id = p.attach(&mut self.world.fabric).unwrap_or_else(|e| panic!("host plan: {e}"));
        debug_assert_eq!(id as usize, self.world.hosts.len());
        let s = &mut self.side_count[(p.side == Side::Right) as usize];
        let index = *s;
        *s += 1;
        let tcp_cfg = self.tcp_cfg(&p.tcp);
        self.world.hosts.push(Host { side: p.side, index, tcp_cfg, next_port: EPHEMERAL_FIRST, ipv6: p.ipv6 });
        id
    }
}

pub fn build(r: &Resolved) -> Built {
    let mut fabric = Fabric::dumbbell(&r.bottleneck, r.seed).unwrap_or_else(|e| panic!("bottleneck: {e}"));
    let monitors = monitor::observe(&mut fabric, r.output.series_bin, r.duration);
    let mut b = Builder { world: World::new(fabric), side_count: [0, 0] };
    b.world.monitors = monitors;

    // Command apps (real programs) never reach here: run_scenario refuses them.
    let scenario::Assembled { apps, names, .. } = scenario::assemble(r, &mut b);
    b.world.app_tcp = vec![TcpTotals::default(); apps.len()];
    b.world.app_timers = r.timer_lateness.as_ref().map(|t| AppTimers::new(t, r.seed, &names));
    b.world.paths_added();
    Built { world: b.world, apps, app_names: names }
}
