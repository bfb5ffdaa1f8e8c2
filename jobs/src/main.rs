//! The `stencil` binary: the allocator and its settings, then one command line
//! ([`stencil::command`]).

use std::process::ExitCode;

/// A DOM is millions of small allocations made and freed page after page, and glibc's
/// allocator spends a large share of `stencil run`'s time in malloc and free. mimalloc's price
/// is memory: `run`'s peak RSS is higher (docs/benchmarks.md has both figures).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// mimalloc v3's option numbers (`mi_option_e` in its mimalloc.h, which keeps retired options'
/// slots so the numbers stay put); the Rust bindings do not name these two.
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;
const MI_OPTION_ALLOW_THP: libmimalloc_sys::mi_option_t = 43;

/// A batch job reuses the memory it frees at once: by default mimalloc hands freed pages back
/// to the kernel after a second, and the kernel zeroes them again when the next pages are
/// parsed. Committing arenas eagerly and never purging makes `run` faster at about the same
/// peak RSS as mimalloc's defaults (docs/benchmarks.md): the memory kept is memory the job
/// used.
///
/// No transparent huge pages either: mimalloc asks for them (`MADV_HUGEPAGE`), and a kernel
/// that defragments on such requests (`defrag` = `madvise`, a common default) compacts memory
/// in the page fault; without them `run` is faster and its peak RSS lower (docs/benchmarks.md).
/// The option only governs memory mapped after it is set, and mimalloc maps its first arena
/// before `main`, so the process-wide switch is thrown as well.
///
/// zstd, a C library, allocates with the C allocator, not ours: a compression context of a
/// megabyte or so for every column chunk of every Parquet table, which glibc hands back to the
/// kernel when it is freed (unmapping a block it mapped, or trimming its heap's top), so every
/// chunk would pay again for page faults and the kernel's zeroing. Served from glibc's heap,
/// and the heap not trimmed, the contexts reuse the same memory, and `run` takes fewer page
/// faults (docs/benchmarks.md).
fn tune_allocator() {
    // SAFETY: mi_option_set only stores an integer in mimalloc's option table; the prctl
    // call takes no pointers and only sets a flag of this process (it fails harmlessly on
    // kernels without it); mallopt only sets two of glibc's thresholds, before any thread
    // that could allocate with it is started.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 1);
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1);
        libmimalloc_sys::mi_option_set(MI_OPTION_ALLOW_THP, 0);
        #[cfg(target_os = "linux")]
        libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0);
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        {
            libc::mallopt(libc::M_MMAP_THRESHOLD, C_HEAP_LARGEST);
            libc::mallopt(libc::M_TRIM_THRESHOLD, C_HEAP_KEPT);
        }
    }
}

/// The largest block glibc serves from its heap rather than by a mapping of its own (its
/// default is 128 KB; zstd's contexts for Parquet's pages are a few megabytes at most). 32 MB
/// stays within the limit some glibc versions set (half a thread heap's 64 MB; 2.36 takes
/// more), so the call is not refused anywhere.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const C_HEAP_LARGEST: libc::c_int = 32 << 20;
/// Free memory at the top of glibc's heap kept rather than handed back to the kernel.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const C_HEAP_KEPT: libc::c_int = 512 << 20;

fn main() -> ExitCode {
    tune_allocator();
    stencil::set_up_process();
    match stencil::command(std::env::args_os()) {
        Ok(Ok(code)) => code,
        Ok(Err(message)) => {
            eprintln!("stencil: {message}");
            ExitCode::FAILURE
        }
        Err(usage) => usage.exit(),
    }
}
