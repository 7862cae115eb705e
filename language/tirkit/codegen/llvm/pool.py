"""The native thread pool behind parallel loops: a small LLVM module of its own, one per pool.

    tirkit_pool_init()                    set up the mutex and condition variable
    tirkit_pool_worker(i64 index)         a worker's whole life: wait for a launch, run its
                                          chunk, count it done; returns after stop
    tirkit_pool_launch(ptr fn, ptr closure, i64 n)
                                          the `launch` every kernel takes (llvm/function.py)
    tirkit_pool_stop()                    wake every worker for the last time

A launch splits [0, n) into k = min(threads, n) contiguous chunks [n*i/k, n*(i+1)/k), runs
chunk 0 on the calling thread and chunk i on worker i, and returns when every worker has
checked in (workers past k have nothing to run). It
publishes the job by bumping a generation counter; workers spin on the counter for a while
after each job (a launch then costs a few hundred nanoseconds) and then sleep on the
condition variable, which a launch broadcasts only when some worker sleeps. The sleeper count
and the generation are sequentially consistent, so a worker either sees the new generation
before it sleeps or is counted and woken. A launch made while another runs (a nested parallel
loop, or a kernel called from a second Python thread) runs its range serially on its caller.

Worker threads are Python threads, each blocked in one ctypes call to `tirkit_pool_worker`
(the GIL released), so the interpreter knows them; see codegen/runtime.py.

The pool is written as LLVM IR rather than as C so that it needs no compiler on the user's
machine; it calls only POSIX threads functions, resolved in the running process.
"""
from __future__ import annotations

import platform

WORKER_SPIN = 1 << 16     # pause-loop rounds a worker spins before it sleeps (~1-3 ms)
LAUNCH_SPIN = 1 << 12     # rounds a launch spins on the done count before it yields the CPU
LOCK_BYTES = 128          # room for a pthread_mutex_t or pthread_cond_t on every libc we know


def _pause() -> str:
    machine = platform.machine().lower()
    if machine in ("x86_64", "amd64", "i686", "i386"):
        return '  call void asm sideeffect "pause", ""()\n'
    if machine in ("aarch64", "arm64"):
        return '  call void asm sideeffect "yield", ""()\n'
    return ""


def module_text(threads: int) -> str:
    """The pool's LLVM IR for `threads` threads (the caller and threads - 1 workers)."""
    k = max(1, int(threads))
    if k == 1:                    # no workers, no threads functions: every launch is serial
        return SERIAL
    pause = _pause()
    return f"""
@gen = internal global i64 0, align 64
@done = internal global i64 0, align 64
@busy = internal global i32 0, align 64
@stop = internal global i32 0, align 4
@sleepers = internal global i64 0, align 64
@job_fn = internal global ptr null, align 8
@job_closure = internal global ptr null, align 8
@job_n = internal global i64 0, align 8
@job_k = internal global i64 0, align 8
@mutex = internal global [{LOCK_BYTES} x i8] zeroinitializer, align 64
@cond = internal global [{LOCK_BYTES} x i8] zeroinitializer, align 64

declare i32 @pthread_mutex_init(ptr, ptr)
declare i32 @pthread_cond_init(ptr, ptr)
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare i32 @pthread_cond_wait(ptr, ptr)
declare i32 @pthread_cond_broadcast(ptr)
declare i32 @sched_yield()

define void @tirkit_pool_init() {{
entry:
  %a = call i32 @pthread_mutex_init(ptr @mutex, ptr null)
  %b = call i32 @pthread_cond_init(ptr @cond, ptr null)
  ret void
}}

define internal i64 @bound(i64 %n, i64 %i, i64 %k) {{
entry:
  %p = mul i64 %n, %i
  %q = udiv i64 %p, %k
  ret i64 %q
}}

define void @tirkit_pool_worker(i64 %index) {{
entry:
  %next = add i64 %index, 1
  br label %idle

idle:
  %seen = phi i64 [ 0, %entry ], [ %g, %ran ]
  br label %spin

spin:
  %round = phi i64 [ 0, %idle ], [ %round1, %spin_again ]
  %g0 = load atomic i64, ptr @gen seq_cst, align 8
  %new0 = icmp ne i64 %g0, %seen
  br i1 %new0, label %woken, label %spin_more

spin_more:
  %round1 = add i64 %round, 1
  %spinning = icmp ult i64 %round1, {WORKER_SPIN}
  br i1 %spinning, label %spin_again, label %sleep

spin_again:
{pause}  br label %spin

sleep:
  %l = call i32 @pthread_mutex_lock(ptr @mutex)
  %s0 = atomicrmw add ptr @sleepers, i64 1 seq_cst
  br label %sleep_check

sleep_check:
  %g1 = load atomic i64, ptr @gen seq_cst, align 8
  %same = icmp eq i64 %g1, %seen
  br i1 %same, label %sleep_wait, label %sleep_done

sleep_wait:
  %w = call i32 @pthread_cond_wait(ptr @cond, ptr @mutex)
  br label %sleep_check

sleep_done:
  %s1 = atomicrmw sub ptr @sleepers, i64 1 seq_cst
  %u = call i32 @pthread_mutex_unlock(ptr @mutex)
  br label %woken

woken:
  %g = load atomic i64, ptr @gen seq_cst, align 8
  %st = load atomic i32, ptr @stop seq_cst, align 4
  %stopping = icmp ne i32 %st, 0
  br i1 %stopping, label %exit, label %run

run:
  %fn = load ptr, ptr @job_fn, align 8
  %closure = load ptr, ptr @job_closure, align 8
  %n = load i64, ptr @job_n, align 8
  %k = load i64, ptr @job_k, align 8
  %mine = icmp ult i64 %index, %k
  br i1 %mine, label %call, label %ran

call:
  %begin = call i64 @bound(i64 %n, i64 %index, i64 %k)
  %end = call i64 @bound(i64 %n, i64 %next, i64 %k)
  call void %fn(ptr %closure, i64 %begin, i64 %end)
  br label %ran

ran:
  %d = atomicrmw add ptr @done, i64 1 seq_cst
  br label %idle

exit:
  ret void
}}

define void @tirkit_pool_launch(ptr %fn, ptr %closure, i64 %n) {{
entry:
  %few = icmp sle i64 %n, 1
  %alone = icmp eq i64 {k}, 1
  %serial_now = or i1 %few, %alone
  br i1 %serial_now, label %serial, label %claim

claim:
  %c = cmpxchg ptr @busy, i32 0, i32 1 seq_cst seq_cst
  %claimed = extractvalue {{ i32, i1 }} %c, 1
  br i1 %claimed, label %publish, label %serial

serial:
  call void %fn(ptr %closure, i64 0, i64 %n)
  ret void

publish:
  store ptr %fn, ptr @job_fn, align 8
  store ptr %closure, ptr @job_closure, align 8
  store i64 %n, ptr @job_n, align 8
  %wide = icmp ugt i64 %n, {k}
  %chunks = select i1 %wide, i64 {k}, i64 %n
  store i64 %chunks, ptr @job_k, align 8
  store atomic i64 0, ptr @done seq_cst, align 8
  %g = atomicrmw add ptr @gen, i64 1 seq_cst
  %sl = load atomic i64, ptr @sleepers seq_cst, align 8
  %asleep = icmp ne i64 %sl, 0
  br i1 %asleep, label %wake, label %own

wake:
  %l = call i32 @pthread_mutex_lock(ptr @mutex)
  %b = call i32 @pthread_cond_broadcast(ptr @cond)
  %u = call i32 @pthread_mutex_unlock(ptr @mutex)
  br label %own

own:
  %end0 = call i64 @bound(i64 %n, i64 1, i64 %chunks)
  call void %fn(ptr %closure, i64 0, i64 %end0)
  br label %wait

wait:
  %round = phi i64 [ 0, %own ], [ %round1, %pause ], [ %round1, %yield ]
  %d = load atomic i64, ptr @done seq_cst, align 8
  %all = icmp eq i64 %d, {k - 1}
  br i1 %all, label %finish, label %wait_more

wait_more:
  %round1 = add i64 %round, 1
  %spinning = icmp ult i64 %round1, {LAUNCH_SPIN}
  br i1 %spinning, label %pause, label %yield

pause:
{pause}  br label %wait

yield:
  %y = call i32 @sched_yield()
  br label %wait

finish:
  store atomic i32 0, ptr @busy seq_cst, align 4
  ret void
}}

define void @tirkit_pool_stop() {{
entry:
  store atomic i32 1, ptr @stop seq_cst, align 4
  %g = atomicrmw add ptr @gen, i64 1 seq_cst
  %l = call i32 @pthread_mutex_lock(ptr @mutex)
  %b = call i32 @pthread_cond_broadcast(ptr @cond)
  %u = call i32 @pthread_mutex_unlock(ptr @mutex)
  ret void
}}
"""


SERIAL = """
define void @tirkit_pool_launch(ptr %fn, ptr %closure, i64 %n) {
entry:
  call void %fn(ptr %closure, i64 0, i64 %n)
  ret void
}
"""


def available() -> bool:
    """Whether this platform has the POSIX threads functions the pool calls."""
    import os
    return os.name == "posix"
