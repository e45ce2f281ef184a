// Many small, short-lived allocations cross threads (fetch → commit,
// scanners → applier); mimalloc handles that pattern far better than glibc.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    trawl::cli::main()
}
