//! The operating system behind one seam, as mio keeps its OS layer in `src/sys/`: every
//! call into the kernel (or the C allocator) that std does not wrap lives here, each
//! behind a safe function, each `unsafe` block with a `// SAFETY:` comment and a test
//! (`docs/safety.md` lists them all).
//!
//! - [`fs`]: free space of a filesystem (`statvfs`) and the exclusive advisory lock on
//!   a file (`flock`);
//! - `mmap`: the presence bits' mapping seen as `[AtomicU64]`, with its `madvise`,
//!   `mlock` and `msync` (through memmap2) and the CPU prefetch hint;
//! - [`process`]: the open-files limit raised to its hard limit, SIGPIPE's default
//!   action restored;
//! - [`alloc`]: mimalloc's options (freed memory purged at once);
//! - [`procfs`]: what `/proc` says of this process's memory, the machine's RAM and a
//!   thread's CPU time;
//! - `socket`: `IP_BIND_ADDRESS_NO_PORT` for the bound connects of `--bind-address`.
//!
//! Callers elsewhere stay free of `unsafe` (the workspace denies `unsafe_code`); the
//! only other file that needs it is `src/warc/igzip.rs`, which calls ISA-L's C API, a
//! library rather than the OS.

pub mod alloc;
pub mod fs;
pub(crate) mod mmap;
pub mod process;
pub mod procfs;
pub(crate) mod socket;
