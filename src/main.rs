// Many small, short-lived allocations cross threads (fetch → commit,
// scanners → applier); mimalloc handles that pattern far better than glibc.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    tune_glibc_malloc();
    raise_open_file_limit();
    trawl::cli::main()
}

/// RocksDB's C++ allocations (memtable arenas, cached blocks) still go
/// through glibc malloc. Its defaults cost a crawl ~40 MB of RSS: one arena
/// per thread that ever allocated, and an mmap threshold that rises after
/// each freed memtable block so later blocks land in (and fragment) the
/// heap. Two arenas and a fixed threshold: a 100,000-page crawl peaked at
/// 145 MB instead of 191, at the same CPU per page.
fn tune_glibc_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called before any
    // thread exists, as glibc recommends.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 << 10);
    }
}

/// Raises the soft limit on open files to the hard one, as servers that
/// keep many files open do: RocksDB then opens every table file of the db
/// at start (see `store::open`) and blob files as they are read, and a
/// 1,000,000-page db has over a thousand of those, past a soft limit of
/// 1,024.
fn raise_open_file_limit() {
    #[cfg(unix)]
    {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit/setrlimit read and write the struct we pass.
        unsafe {
            if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
                lim.rlim_cur = lim.rlim_max;
                libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
            }
        }
    }
}
