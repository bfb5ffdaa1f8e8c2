//! Worker, process and hostfile flags, turned into a timely configuration.
//!
//! timely's own argument parser owns `-h` (its hostfile, not help) and rejects every flag it
//! does not know, so Stencil parses its command line with clap and builds `timely::Config`
//! itself.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use timely::dataflow::ProbeHandle;
use timely::worker::Worker;

/// How long a worker with nothing to do sleeps before looking again. Workers wait for each
/// other at every stage boundary (one with fewer or smaller files waits for the others'
/// pages); spinning there, as `Worker::step_while` does, takes a core from the workers still
/// parsing, or half of one where two vCPUs are hyperthreads of one core. timely wakes a parked
/// worker when data or progress arrives; the timeout only bounds a missed wake-up.
const IDLE_PARK: Duration = Duration::from_millis(10);

/// Steps `worker` until every worker's round 0 has passed `probe`: the barrier each of
/// Stencil's one-round dataflows ends with. Idle, the worker parks (see `IDLE_PARK`).
pub fn finish_round(worker: &mut Worker, probe: &ProbeHandle<u64>) {
    worker.step_or_park_while(Some(IDLE_PARK), || probe.less_than(&1));
}

/// `--connect-timeout` by default: time enough for a launcher to start every process.
pub const CONNECT_TIMEOUT: u64 = 300;

#[derive(Args, Clone, Debug)]
pub struct ClusterArgs {
    /// Worker threads in this process.
    #[arg(short = 'w', long, default_value_t = 1)]
    pub workers: usize,
    /// Processes in the cluster (each started with the same arguments and its own --process).
    #[arg(short = 'n', long, default_value_t = 1)]
    pub processes: usize,
    /// This process's index, 0-based.
    #[arg(short = 'p', long, default_value_t = 0)]
    pub process: usize,
    /// One `host:port` per line for each process, process 0 first (needed with --processes > 1).
    #[arg(long)]
    pub hostfile: Option<PathBuf>,
    /// With --processes > 1: give up (exit non-zero) when the other processes have not all
    /// connected within this many seconds, rather than wait for one that never started.
    #[arg(long, default_value_t = CONNECT_TIMEOUT, value_name = "SECONDS")]
    pub connect_timeout: u64,
}

impl ClusterArgs {
    pub fn config(&self) -> Result<timely::Config, String> {
        let threads = self.workers.max(1);
        if self.processes <= 1 {
            return Ok(timely::Config::process(threads));
        }
        if self.process >= self.processes {
            return Err(format!(
                "--process {} is out of range for --processes {}",
                self.process, self.processes
            ));
        }
        let hostfile = self
            .hostfile
            .as_ref()
            .ok_or("--processes > 1 needs --hostfile")?;
        let text = std::fs::read_to_string(hostfile)
            .map_err(|e| format!("{}: {e}", hostfile.display()))?;
        let addresses: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(String::from)
            .collect();
        if addresses.len() < self.processes {
            return Err(format!(
                "{} lists {} addresses for {} processes",
                hostfile.display(),
                addresses.len(),
                self.processes
            ));
        }
        Ok(timely::Config {
            communication: timely::CommunicationConfig::Cluster {
                threads,
                process: self.process,
                addresses: addresses[..self.processes].to_vec(),
                report: false,
                zerocopy: false,
            },
            worker: timely::WorkerConfig::default(),
        })
    }

    /// Starts the timely computation, as `timely::execute`, but never waits forever for the
    /// other processes: timely connects them before it starts any worker and retries without
    /// end, so a peer that was never started (a failed launch, a wrong hostfile) would leave
    /// this process waiting with no message. Past `--connect-timeout` it ends the process,
    /// saying so.
    pub fn execute<T, F>(
        &self,
        config: timely::Config,
        work: F,
    ) -> Result<timely::communication::initialize::WorkerGuards<T>, String>
    where
        T: Send + 'static,
        F: Fn(&mut Worker) -> T + Send + Sync + 'static,
    {
        let connected = Arc::new(AtomicBool::new(false));
        if self.processes > 1 {
            let (done, limit) = (connected.clone(), Duration::from_secs(self.connect_timeout));
            let (process, processes) = (self.process, self.processes);
            std::thread::spawn(move || {
                let start = Instant::now();
                while !done.load(Ordering::Acquire) {
                    if start.elapsed() >= limit {
                        eprintln!(
                            "stencil: process {process} of {processes}: the other processes did \
                             not all connect within {} s (--connect-timeout); is every process \
                             started, with the same --hostfile?",
                            limit.as_secs()
                        );
                        // SAFETY: _exit ends the process; it takes no pointers. Nothing has
                        // been computed yet, and the workers do not exist.
                        unsafe { libc::_exit(1) };
                    }
                    std::thread::sleep(Duration::from_millis(100));
                }
            });
        }
        let guards = timely::execute(config, work);
        connected.store(true, Ordering::Release);
        guards
    }

    /// Whether this process is the first of the cluster (it prepares the output folder).
    pub fn is_first_process(&self) -> bool {
        self.process == 0
    }
}
