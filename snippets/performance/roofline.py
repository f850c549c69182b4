"""Chapter "Performance": RoPE moves bytes, it hardly computes.

Run it: python snippets/performance/roofline.py
"""

# --8<-- [start:intensity]
batch, heads, seq, head_dim = 8, 32, 4096, 128  # q and k of one layer, as measured below
element = 2  # bytes of a bfloat16 number
numbers = batch * heads * seq * head_dim  # in q, and again in k

# RoPE: every number of q and k is read once and written once; each output channel is
# x_a cos - x_b sin (or x_b cos + x_a sin): two products and one sum
rope_bytes = 2 * numbers * 2 * element
rope_flops = 2 * numbers * 3

# a matrix product C = A B of n x n matrices: 2 n^3 operations, and at best (each matrix
# moved once) A and B read, C written
n = 4096
matmul_bytes = 3 * n * n * element
matmul_flops = 2 * n**3

print(f"RoPE on q and k: {rope_bytes / 2**20:.0f} MiB moved, "
      f"{rope_flops / rope_bytes:.2f} FLOP per byte")  # fmt: skip
print(f"{n} x {n} matrix product: {matmul_bytes / 2**20:.0f} MiB moved at best, "
      f"{matmul_flops / matmul_bytes:.0f} FLOP per byte")  # fmt: skip

# The machine's side: its peak arithmetic over its peak bandwidth, the "ridge point" below
# which an operation waits for memory. NVIDIA's specification of the H100 SXM (not measured
# here): 66.9 TFLOP/s in float32 outside the tensor cores (where RoPE's arithmetic runs),
# 989.4 TFLOP/s for bfloat16 matrix products on the tensor cores, 3.35 TB/s of memory.
bandwidth = 3.35e12
for name, flops in (("float32, outside the tensor cores", 66.9e12),
                    ("bfloat16 matrix products", 989.4e12)):  # fmt: skip
    print(f"H100 ridge point, {name}: {flops / bandwidth:.0f} FLOP per byte")
assert rope_flops / rope_bytes < 66.9e12 / bandwidth < matmul_flops / matmul_bytes
# --8<-- [end:intensity]
