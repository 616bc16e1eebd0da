/*
 * faultinject.c: an LD_PRELOAD shim that makes writes to chosen files fail, as SQLite's own test
 * suite does with its fault-injecting VFS, but for any process and any library (SQLite, Python's
 * io, faiss's stdio, libstdc++ streams).
 *
 * Built on demand by benchmarks/faultinject.py (gcc -shared -fPIC ... -ldl). Configured by the
 * environment, read once when the library is loaded:
 *
 *   FAULT_PATH    substring of a file's path: the files whose writes may fail ("contexts.sqlite",
 *                 "/cache/"). Matched against the path given to open() and against the file's
 *                 absolute path (/proc/self/fd). Unset: the shim does nothing.
 *   FAULT_OPS     comma-separated operations that count (and can fail): categories "write"
 *                 (write, pwrite, pwrite64, writev, pwritev, fwrite, fflush, sendfile,
 *                 copy_file_range), "fsync" (fsync, fdatasync), "truncate" (ftruncate,
 *                 ftruncate64, fallocate, posix_fallocate), "open" (opening a matching path for
 *                 writing or creation), "rename" (rename/renameat/renameat2 from or to a matching
 *                 path), "mkdir"; or a function's own name ("pwrite64"). Default "write,fsync,truncate".
 *   FAULT_AT      the Nth matching operation (1-based, counted per process) fails; 0 or unset:
 *                 none fails (count only)
 *   FAULT_ERRNO   the errno it fails with: ENOSPC (default), EIO, EROFS, EDQUOT, EACCES, EPERM,
 *                 ENOENT, EFBIG, or a number; or SIGKILL: the process kills itself there (a
 *                 kill that lands exactly in a store write or a journal append)
 *   FAULT_WHEN    with SIGKILL: "before" (default: the operation is not made) or "after" (it is
 *                 made, then the process dies: e.g. right after a journal's fsync)
 *   FAULT_STICKY  1: every later matching operation fails too (a full disk stays full)
 *   FAULT_SHORT   1: a write that fails first writes half its bytes and returns the short count
 *                 (as a disk filling mid-write does); the next one fails (with FAULT_STICKY)
 *   FAULT_LOG     file to append one line to each time a fault fires (the first 50 per process):
 *                 "fired pid=P op=pwrite64 n=N errno=ENOSPC t=<epoch seconds> path=<file>"
 *   FAULT_COUNT   file to append, at exit, "pid=P matched=N fired=K <op>=<n> ..." (the matching
 *                 operations this process made; nothing when it made none), to pick fault
 *                 points among them
 *
 * The fds of matching files are remembered at open (open, open64, openat, openat64, creat and
 * their _FORTIFY_SOURCE __*_2 forms, fopen, fopen64, dup, dup2, dup3) and forgotten at close
 * and fclose. Writes made inside glibc itself (stdio's buffered writes) do not pass through the
 * PLT; fwrite and fflush are intercepted for them. Memory-mapped writes (SQLite's -shm) are not
 * seen.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define MAX_FD 65536
#define MAX_LOG_LINES 50

/* the categories of FAULT_OPS */
enum { CAT_WRITE = 1, CAT_FSYNC = 2, CAT_TRUNCATE = 4, CAT_OPEN = 8, CAT_RENAME = 16, CAT_MKDIR = 32 };

static const char *g_path;          /* FAULT_PATH, NULL: inactive */
static int g_cats = CAT_WRITE | CAT_FSYNC | CAT_TRUNCATE;
static char g_names[1024];          /* FAULT_OPS tokens that are function names, ",a,b," */
static long g_at;                   /* FAULT_AT */
static int g_errno = ENOSPC;
static char g_errno_name[32] = "ENOSPC";
static int g_sticky, g_short, g_kill, g_kill_after;
static const char *g_log, *g_count;
static unsigned char g_fds[MAX_FD]; /* 1: the fd is a matching file */
static long g_matched, g_fired, g_logged;
static __thread int t_inside;       /* the shim's own I/O: not intercepted */
static __thread int t_kill_after;   /* SIGKILL once the operation in progress returns */

/* per-function counts, for FAULT_COUNT */
#define OPS(X) X(write) X(pwrite) X(pwrite64) X(writev) X(pwritev) X(fwrite) X(fflush) \
    X(sendfile) X(copy_file_range) X(fsync) X(fdatasync) X(ftruncate) X(ftruncate64) \
    X(fallocate) X(posix_fallocate) X(open) X(rename) X(mkdir)
#define ENUM(name) OP_##name,
enum { OPS(ENUM) N_OPS };
#define NAME(name) #name,
static const char *op_names[N_OPS] = {OPS(NAME)};
static long op_counts[N_OPS];

static void *real(const char *name) {
    void *f = dlsym(RTLD_NEXT, name);
    if (!f) {
        fprintf(stderr, "faultinject: %s not found\n", name);
        abort();
    }
    return f;
}
#define REAL(ret, name, ...)                                         \
    static ret (*real_##name)(__VA_ARGS__);                          \
    if (!real_##name) real_##name = (ret(*)(__VA_ARGS__))real(#name)

static int errno_of(const char *s) {
    static const struct { const char *name; int code; } known[] = {
        {"ENOSPC", ENOSPC}, {"EIO", EIO}, {"EROFS", EROFS}, {"EDQUOT", EDQUOT},
        {"EACCES", EACCES}, {"EPERM", EPERM}, {"ENOENT", ENOENT}, {"EFBIG", EFBIG},
        {"ENXIO", ENXIO}, {"ESTALE", ESTALE},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(s, known[i].name)) return known[i].code;
    int n = atoi(s);
    return n > 0 ? n : ENOSPC;
}

__attribute__((constructor)) static void init(void) {
    const char *p = getenv("FAULT_PATH");
    if (!p || !*p) return;
    g_path = p;
    const char *ops = getenv("FAULT_OPS");
    if (ops && *ops) {
        g_cats = 0;
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", ops);
        strcpy(g_names, ",");
        for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            if (!strcmp(tok, "write")) g_cats |= CAT_WRITE;
            else if (!strcmp(tok, "fsync")) g_cats |= CAT_FSYNC;
            else if (!strcmp(tok, "truncate")) g_cats |= CAT_TRUNCATE;
            else if (!strcmp(tok, "open")) g_cats |= CAT_OPEN;
            else if (!strcmp(tok, "rename")) g_cats |= CAT_RENAME;
            else if (!strcmp(tok, "mkdir")) g_cats |= CAT_MKDIR;
            else if (strlen(g_names) + strlen(tok) + 2 < sizeof g_names) {
                strcat(g_names, tok);
                strcat(g_names, ",");
            }
        }
    }
    const char *at = getenv("FAULT_AT");
    g_at = at ? atol(at) : 0;
    const char *e = getenv("FAULT_ERRNO");
    if (e && *e) {
        g_kill = !strcmp(e, "SIGKILL") || !strcmp(e, "KILL");
        g_errno = g_kill ? 0 : errno_of(e);
        snprintf(g_errno_name, sizeof g_errno_name, "%s", e);
    }
    const char *w = getenv("FAULT_WHEN");
    g_kill_after = g_kill && w && !strcmp(w, "after");
    const char *s = getenv("FAULT_STICKY");
    g_sticky = s && *s == '1';
    s = getenv("FAULT_SHORT");
    g_short = s && *s == '1';
    g_log = getenv("FAULT_LOG");
    g_count = getenv("FAULT_COUNT");
}

/* the shim's own appends (log and count files): raw, never intercepted */
static void append_line(const char *file, const char *line) {
    if (!file || !*file) return;
    t_inside++;
    REAL(int, open, const char *, int, ...);
    REAL(ssize_t, write, int, const void *, size_t);
    REAL(int, close, int);
    int fd = real_open(file, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
        real_write(fd, line, strlen(line));
        real_close(fd);
    }
    t_inside--;
}

static int g_finished;

static void finish(void) {
    if (__atomic_exchange_n(&g_finished, 1, __ATOMIC_SEQ_CST)) return;
    if (!g_path || !g_count || !__atomic_load_n(&g_matched, __ATOMIC_SEQ_CST)) return;
    char line[2048];
    int n = snprintf(line, sizeof line, "pid=%d matched=%ld fired=%ld", (int)getpid(),
                     __atomic_load_n(&g_matched, __ATOMIC_SEQ_CST),
                     __atomic_load_n(&g_fired, __ATOMIC_SEQ_CST));
    for (int i = 0; i < N_OPS && n < (int)sizeof line - 64; i++)
        if (op_counts[i]) n += snprintf(line + n, sizeof line - n, " %s=%ld", op_names[i], op_counts[i]);
    snprintf(line + n, sizeof line - n, "\n");
    append_line(g_count, line);
}

__attribute__((destructor)) static void at_exit_counts(void) { finish(); }

static int active(void) { return g_path && !t_inside; }

static int path_matches(const char *path) { return path && strstr(path, g_path) != NULL; }

static int fd_path(int fd, char *out, size_t size) {
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    t_inside++;
    ssize_t n = readlink(link, out, size - 1);
    t_inside--;
    if (n < 0) return 0;
    out[n] = 0;
    return 1;
}

static void remember(int fd, const char *path) {
    if (fd < 0 || fd >= MAX_FD || !active()) return;
    int match = path_matches(path);
    if (!match) {
        char abs[PATH_MAX];
        match = fd_path(fd, abs, sizeof abs) && path_matches(abs);
    }
    __atomic_store_n(&g_fds[fd], (unsigned char)match, __ATOMIC_SEQ_CST);
}

static void forget(int fd) {
    if (fd >= 0 && fd < MAX_FD) __atomic_store_n(&g_fds[fd], 0, __ATOMIC_SEQ_CST);
}

static int fd_matches(int fd) {
    return active() && fd >= 0 && fd < MAX_FD && __atomic_load_n(&g_fds[fd], __ATOMIC_SEQ_CST);
}

static int op_counted(int op, int cat) {
    if (g_cats & cat) return 1;
    char needle[64];
    snprintf(needle, sizeof needle, ",%s,", op_names[op]);
    return strstr(g_names, needle) != NULL;
}

/* a matching operation: count it; 1 if it must fail (errno is then set) */
static int fd_path(int fd, char *out, size_t size);
static void finish(void);

static int fault(int op, int cat, const char *what, int fd) {
    if (!op_counted(op, cat)) return 0;
    __atomic_add_fetch(&op_counts[op], 1, __ATOMIC_SEQ_CST);
    long n = __atomic_add_fetch(&g_matched, 1, __ATOMIC_SEQ_CST);
    if (g_at <= 0 || n < g_at || (n > g_at && !g_sticky)) return 0;
    __atomic_add_fetch(&g_fired, 1, __ATOMIC_SEQ_CST);
    if (g_log && __atomic_add_fetch(&g_logged, 1, __ATOMIC_SEQ_CST) <= MAX_LOG_LINES) {
        char line[PATH_MAX + 256], found[PATH_MAX];
        if (!what && fd >= 0 && fd_path(fd, found, sizeof found)) what = found;
        struct timespec now;
        clock_gettime(CLOCK_REALTIME, &now);
        snprintf(line, sizeof line, "fired pid=%d op=%s n=%ld errno=%s t=%ld.%09ld path=%s\n",
                 (int)getpid(), op_names[op], n, g_errno_name, (long)now.tv_sec, now.tv_nsec,
                 what ? what : "?");
        append_line(g_log, line);
    }
    if (g_kill) {
        if (g_kill_after) {
            t_kill_after = 1; /* the hook makes the operation, then AFTER() kills */
            return 0;
        }
        finish();
        kill(getpid(), SIGKILL);
    }
    errno = g_errno;
    return 1;
}

static void die_now(void) {
    finish();
    kill(getpid(), SIGKILL);
}
/* the result of a real operation, after which a FAULT_WHEN=after kill lands */
#define AFTER(call)                                \
    ({                                             \
        __typeof__(call) _result = (call);         \
        if (t_kill_after) die_now();               \
        _result;                                   \
    })

static int fd_fault(int op, int cat, int fd) {
    if (!fd_matches(fd)) return 0;
    int saved = errno;
    int failed = fault(op, cat, NULL, fd);
    if (!failed) errno = saved;
    return failed;
}

/* -- opening: remember which fds are matching files ------------------------------------------ */

static int wants_write(int flags) { return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0; }

static int open_fault(const char *path, int flags) {
    if (!active() || !wants_write(flags) || !path_matches(path)) return 0;
    return fault(OP_open, CAT_OPEN, path, -1);
}

static mode_t mode_arg(int flags, va_list ap) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(ap, int) : 0;
}

#define OPEN_LIKE(name)                                                  \
    int name(const char *path, int flags, ...) {                         \
        va_list ap;                                                      \
        va_start(ap, flags);                                             \
        mode_t mode = mode_arg(flags, ap);                               \
        va_end(ap);                                                      \
        REAL(int, name, const char *, int, ...);                         \
        if (open_fault(path, flags)) return -1;                          \
        int fd = real_##name(path, flags, mode);                         \
        if (fd >= 0) remember(fd, path);                                 \
        return fd;                                                       \
    }
OPEN_LIKE(open)
OPEN_LIKE(open64)

#define OPENAT_LIKE(name)                                                \
    int name(int dirfd, const char *path, int flags, ...) {              \
        va_list ap;                                                      \
        va_start(ap, flags);                                             \
        mode_t mode = mode_arg(flags, ap);                               \
        va_end(ap);                                                      \
        REAL(int, name, int, const char *, int, ...);                    \
        if (open_fault(path, flags)) return -1;                          \
        int fd = real_##name(dirfd, path, flags, mode);                  \
        if (fd >= 0) remember(fd, path);                                 \
        return fd;                                                       \
    }
OPENAT_LIKE(openat)
OPENAT_LIKE(openat64)

int __open_2(const char *path, int flags) {
    REAL(int, __open_2, const char *, int);
    if (open_fault(path, flags)) return -1;
    int fd = real___open_2(path, flags);
    if (fd >= 0) remember(fd, path);
    return fd;
}
int __open64_2(const char *path, int flags) {
    REAL(int, __open64_2, const char *, int);
    if (open_fault(path, flags)) return -1;
    int fd = real___open64_2(path, flags);
    if (fd >= 0) remember(fd, path);
    return fd;
}
int __openat_2(int dirfd, const char *path, int flags) {
    REAL(int, __openat_2, int, const char *, int);
    if (open_fault(path, flags)) return -1;
    int fd = real___openat_2(dirfd, path, flags);
    if (fd >= 0) remember(fd, path);
    return fd;
}
int __openat64_2(int dirfd, const char *path, int flags) {
    REAL(int, __openat64_2, int, const char *, int);
    if (open_fault(path, flags)) return -1;
    int fd = real___openat64_2(dirfd, path, flags);
    if (fd >= 0) remember(fd, path);
    return fd;
}
int creat(const char *path, mode_t mode) {
    REAL(int, creat, const char *, mode_t);
    if (open_fault(path, O_CREAT | O_WRONLY | O_TRUNC)) return -1;
    int fd = real_creat(path, mode);
    if (fd >= 0) remember(fd, path);
    return fd;
}
int creat64(const char *path, mode_t mode) {
    REAL(int, creat64, const char *, mode_t);
    if (open_fault(path, O_CREAT | O_WRONLY | O_TRUNC)) return -1;
    int fd = real_creat64(path, mode);
    if (fd >= 0) remember(fd, path);
    return fd;
}

static int mode_writes(const char *mode) { return mode && strpbrk(mode, "wa+") != NULL; }

FILE *fopen(const char *path, const char *mode) {
    REAL(FILE *, fopen, const char *, const char *);
    if (mode_writes(mode) && open_fault(path, O_WRONLY)) return NULL;
    FILE *f = real_fopen(path, mode);
    if (f) remember(fileno(f), path);
    return f;
}
FILE *fopen64(const char *path, const char *mode) {
    REAL(FILE *, fopen64, const char *, const char *);
    if (mode_writes(mode) && open_fault(path, O_WRONLY)) return NULL;
    FILE *f = real_fopen64(path, mode);
    if (f) remember(fileno(f), path);
    return f;
}

int dup(int fd) {
    REAL(int, dup, int);
    int out = real_dup(fd);
    if (out >= 0 && out < MAX_FD) forget(out), g_fds[out] = fd_matches(fd);
    return out;
}
int dup2(int fd, int to) {
    REAL(int, dup2, int, int);
    int out = real_dup2(fd, to);
    if (out >= 0 && out < MAX_FD && out != fd) forget(out), g_fds[out] = fd_matches(fd);
    return out;
}
int dup3(int fd, int to, int flags) {
    REAL(int, dup3, int, int, int);
    int out = real_dup3(fd, to, flags);
    if (out >= 0 && out < MAX_FD) forget(out), g_fds[out] = fd_matches(fd);
    return out;
}

int close(int fd) {
    REAL(int, close, int);
    forget(fd);
    return real_close(fd);
}
int fclose(FILE *f) {
    REAL(int, fclose, FILE *);
    if (f) forget(fileno(f));
    return real_fclose(f);
}

/* -- writes ----------------------------------------------------------------------------------- */

ssize_t write(int fd, const void *buf, size_t n) {
    REAL(ssize_t, write, int, const void *, size_t);
    if (fd_fault(OP_write, CAT_WRITE, fd)) {
        if (g_short && n > 1 && __atomic_load_n(&g_fired, __ATOMIC_SEQ_CST) == 1) {
            int saved = errno;
            ssize_t done = real_write(fd, buf, n / 2);
            errno = saved;
            if (done > 0) return done;
        }
        return -1;
    }
    return AFTER(real_write(fd, buf, n));
}
ssize_t pwrite(int fd, const void *buf, size_t n, off_t off) {
    REAL(ssize_t, pwrite, int, const void *, size_t, off_t);
    if (fd_fault(OP_pwrite, CAT_WRITE, fd)) {
        if (g_short && n > 1 && __atomic_load_n(&g_fired, __ATOMIC_SEQ_CST) == 1) {
            int saved = errno;
            ssize_t done = real_pwrite(fd, buf, n / 2, off);
            errno = saved;
            if (done > 0) return done;
        }
        return -1;
    }
    return AFTER(real_pwrite(fd, buf, n, off));
}
ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off) {
    REAL(ssize_t, pwrite64, int, const void *, size_t, off64_t);
    if (fd_fault(OP_pwrite64, CAT_WRITE, fd)) {
        if (g_short && n > 1 && __atomic_load_n(&g_fired, __ATOMIC_SEQ_CST) == 1) {
            int saved = errno;
            ssize_t done = real_pwrite64(fd, buf, n / 2, off);
            errno = saved;
            if (done > 0) return done;
        }
        return -1;
    }
    return AFTER(real_pwrite64(fd, buf, n, off));
}
ssize_t writev(int fd, const struct iovec *iov, int cnt) {
    REAL(ssize_t, writev, int, const struct iovec *, int);
    if (fd_fault(OP_writev, CAT_WRITE, fd)) return -1;
    return AFTER(real_writev(fd, iov, cnt));
}
ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off) {
    REAL(ssize_t, pwritev, int, const struct iovec *, int, off_t);
    if (fd_fault(OP_pwritev, CAT_WRITE, fd)) return -1;
    return AFTER(real_pwritev(fd, iov, cnt, off));
}
size_t fwrite(const void *buf, size_t size, size_t n, FILE *f) {
    REAL(size_t, fwrite, const void *, size_t, size_t, FILE *);
    if (size && n && fd_fault(OP_fwrite, CAT_WRITE, fileno(f))) return 0;
    return AFTER(real_fwrite(buf, size, n, f));
}
int fflush(FILE *f) {
    REAL(int, fflush, FILE *);
    if (f && fd_fault(OP_fflush, CAT_WRITE, fileno(f))) return EOF;
    return AFTER(real_fflush(f));
}
ssize_t sendfile(int out, int in, off_t *off, size_t n) {
    REAL(ssize_t, sendfile, int, int, off_t *, size_t);
    if (fd_fault(OP_sendfile, CAT_WRITE, out)) return -1;
    return AFTER(real_sendfile(out, in, off, n));
}
ssize_t copy_file_range(int in, off64_t *in_off, int out, off64_t *out_off, size_t n,
                        unsigned int flags) {
    REAL(ssize_t, copy_file_range, int, off64_t *, int, off64_t *, size_t, unsigned int);
    if (fd_fault(OP_copy_file_range, CAT_WRITE, out)) return -1;
    return AFTER(real_copy_file_range(in, in_off, out, out_off, n, flags));
}

/* -- flushes and sizes ------------------------------------------------------------------------ */

int fsync(int fd) {
    REAL(int, fsync, int);
    if (fd_fault(OP_fsync, CAT_FSYNC, fd)) return -1;
    return AFTER(real_fsync(fd));
}
int fdatasync(int fd) {
    REAL(int, fdatasync, int);
    if (fd_fault(OP_fdatasync, CAT_FSYNC, fd)) return -1;
    return AFTER(real_fdatasync(fd));
}
int ftruncate(int fd, off_t len) {
    REAL(int, ftruncate, int, off_t);
    if (fd_fault(OP_ftruncate, CAT_TRUNCATE, fd)) return -1;
    return AFTER(real_ftruncate(fd, len));
}
int ftruncate64(int fd, off64_t len) {
    REAL(int, ftruncate64, int, off64_t);
    if (fd_fault(OP_ftruncate64, CAT_TRUNCATE, fd)) return -1;
    return AFTER(real_ftruncate64(fd, len));
}
int fallocate(int fd, int mode, off_t off, off_t len) {
    REAL(int, fallocate, int, int, off_t, off_t);
    if (fd_fault(OP_fallocate, CAT_TRUNCATE, fd)) return -1;
    return AFTER(real_fallocate(fd, mode, off, len));
}
int posix_fallocate(int fd, off_t off, off_t len) {
    REAL(int, posix_fallocate, int, off_t, off_t);
    if (fd_fault(OP_posix_fallocate, CAT_TRUNCATE, fd)) return errno; /* returns the error */
    return AFTER(real_posix_fallocate(fd, off, len));
}

/* -- names ------------------------------------------------------------------------------------ */

static int name_fault(int op, int cat, const char *a, const char *b) {
    if (!active()) return 0;
    const char *hit = path_matches(a) ? a : path_matches(b) ? b : NULL;
    if (!hit) return 0;
    int saved = errno;
    int failed = fault(op, cat, hit, -1);
    if (!failed) errno = saved;
    return failed;
}
int rename(const char *from, const char *to) {
    REAL(int, rename, const char *, const char *);
    if (name_fault(OP_rename, CAT_RENAME, from, to)) return -1;
    return AFTER(real_rename(from, to));
}
int renameat(int fd1, const char *from, int fd2, const char *to) {
    REAL(int, renameat, int, const char *, int, const char *);
    if (name_fault(OP_rename, CAT_RENAME, from, to)) return -1;
    return AFTER(real_renameat(fd1, from, fd2, to));
}
int renameat2(int fd1, const char *from, int fd2, const char *to, unsigned int flags) {
    REAL(int, renameat2, int, const char *, int, const char *, unsigned int);
    if (name_fault(OP_rename, CAT_RENAME, from, to)) return -1;
    return AFTER(real_renameat2(fd1, from, fd2, to, flags));
}
int mkdir(const char *path, mode_t mode) {
    REAL(int, mkdir, const char *, mode_t);
    if (name_fault(OP_mkdir, CAT_MKDIR, path, NULL)) return -1;
    return AFTER(real_mkdir(path, mode));
}
int mkdirat(int dirfd, const char *path, mode_t mode) {
    REAL(int, mkdirat, int, const char *, mode_t);
    if (name_fault(OP_mkdir, CAT_MKDIR, path, NULL)) return -1;
    return AFTER(real_mkdirat(dirfd, path, mode));
}
