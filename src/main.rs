fn main() -> std::process::ExitCode {
    trawl::cli::main()
}
