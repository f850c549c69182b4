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

# a matrix product C = A B of n x n matrices reads A and B, writes C, and does 2 n^3 operations
n = 4096
matmul_bytes = 3 * n * n * element
matmul_flops = 2 * n**3

print(f"RoPE on q and k: {rope_bytes / 2**20:.0f} MiB moved, "
      f"{rope_flops / rope_bytes:.2f} operations per byte")  # fmt: skip
print(f"{n} x {n} matrix product: {matmul_bytes / 2**20:.0f} MiB moved, "
      f"{matmul_flops / matmul_bytes:.0f} operations per byte")  # fmt: skip
# --8<-- [end:intensity]
