"""Does a device-to-device copy (cudaMemcpyAsync) or a memset (cudaMemsetAsync) need the SMs?

A spin kernel holds every SM (blocks of 1,024 threads, as many as fit) for `SPIN_US`; a copy of
`MB` MiB (torch's contiguous `copy_`, a cudaMemcpyAsync device to device) and a memset of the same
size are issued on a second stream right after it. If an operation's end event comes long before
the spin ends, a copy engine ran it beside the held SMs; if it ends after the spin, it waited for
SMs. Each is also timed alone (bandwidth), and beside a bandwidth-bound SM copy kernel
(`a.add_(0)`-style torch elementwise copy) to see how they share DRAM.
Usage: python3 copy_engine_overlap.py [MB]"""
import ctypes, glob, os, sys, torch
from torch.utils.cpp_extension import load_inline

MB = int(sys.argv[1]) if len(sys.argv) > 1 else 64
SPIN_US = 2000
src = r"""
__global__ void spin(long long ns) {
  long long t0; asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  long long t = t0;
  while (t - t0 < ns) asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
}
void launch_spin(long long ns, int blocks) { spin<<<blocks, 1024>>>(ns); }
"""
ext = load_inline("spinext", cpp_sources="void launch_spin(long long ns, int blocks);",
                  cuda_sources=src, functions=["launch_spin"], verbose=False)
lib = None
for pat in [os.path.join(os.path.dirname(torch.__file__), "lib", "libcudart*.so*"),
            "/usr/local/cuda/lib64/libcudart.so*"] + glob.glob("/usr/local/lib/python3*/dist-packages/nvidia/cu*/lib/libcudart.so*"):
    for p in sorted(glob.glob(pat)):
        try:
            lib = ctypes.CDLL(p); break
        except OSError:
            pass
    if lib: break
print("libcudart:", lib)
props = torch.cuda.get_device_properties(0)
sms = props.multi_processor_count
n = MB * 2**20
a = torch.empty(n, dtype=torch.uint8, device="cuda"); b = torch.empty_like(a)
side = torch.cuda.Stream()

def memset(stream):
    rc = lib.cudaMemsetAsync(ctypes.c_void_p(b.data_ptr()), 0, ctypes.c_size_t(n), ctypes.c_void_p(stream.cuda_stream))
    assert rc == 0, rc

ops = {"memcpy": lambda s: b.copy_(a), "memset": memset, "sm_copy": lambda s: torch.add(a, 0, out=b)}

def alone(name):
    ts = []
    for _ in range(5):
        e0, e1 = torch.cuda.Event(True), torch.cuda.Event(True)
        e0.record(); ops[name](torch.cuda.current_stream()); e1.record(); torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e3)
    us = sorted(ts)[2]
    return us, 2 * n / us / 1e3 if name != "memset" else n / us / 1e3

def beside_spin(name):
    e0, e1, e2 = torch.cuda.Event(True), torch.cuda.Event(True), torch.cuda.Event(True)
    e0.record()
    ext.launch_spin(SPIN_US * 1000, sms * 2)
    side.wait_event(e0)
    with torch.cuda.stream(side):
        ops[name](side); e1.record(side)
    e2.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) * 1e3, e0.elapsed_time(e2) * 1e3

for name in ops:
    alone(name)
    us, gbs = alone(name)
    done, spin_end = beside_spin(name)
    verdict = "beside the held SMs (copy engine)" if done < 0.5 * spin_end else "after the spin (SMs)"
    print(f"{name:8s} {MB} MiB alone {us:8.1f} us ({gbs:6.0f} GB/s); beside a {SPIN_US} us spin: done at {done:8.1f} us, spin ends {spin_end:8.1f}: {verdict}")
