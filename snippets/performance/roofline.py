"""Chapter "Performance": RoPE moves bytes, it hardly computes.

Functions named ``show_*`` print with labels in the reader's language (``lang="en"`` or
``"zh"``); each page calls them in a one-line block.

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

# The machine's side: its peak arithmetic over its peak bandwidth, the "ridge point" below
# which an operation waits for memory. NVIDIA's specification of the H100 SXM (not measured
# here): 66.9 TFLOP/s in float32 outside the tensor cores (where RoPE's arithmetic runs),
# 989.4 TFLOP/s for bfloat16 matrix products on the tensor cores, 3.35 TB/s of memory.
bandwidth = 3.35e12
peaks = {"float32 outside": 66.9e12, "bfloat16 matmul": 989.4e12}  # FLOP/s
assert rope_flops / rope_bytes < 66.9e12 / bandwidth < matmul_flops / matmul_bytes

INTENSITY_TEXT = {
    "en": {
        "rope": "RoPE on q and k: {mib:.0f} MiB moved, {intensity:.2f} FLOP per byte",
        "matmul": "{n} x {n} matrix product: {mib:.0f} MiB moved at best, "
        "{intensity:.0f} FLOP per byte",
        "ridge": "H100 ridge point, {name}: {intensity:.0f} FLOP per byte",
        "float32 outside": "float32, outside the tensor cores",
        "bfloat16 matmul": "bfloat16 matrix products",
    },
    "zh": {
        "rope": "q 和 k 上的 RoPE：搬运 {mib:.0f} MiB，每字节 {intensity:.2f} FLOP",
        "matmul": "{n} x {n} 的矩阵乘法：至少搬运 {mib:.0f} MiB，每字节 {intensity:.0f} FLOP",
        "ridge": "H100 的屋脊点，{name}：每字节 {intensity:.0f} FLOP",
        "float32 outside": "float32，张量核之外",
        "bfloat16 matmul": "bfloat16 矩阵乘法",
    },
}


def show_intensity(lang="en"):
    text = INTENSITY_TEXT[lang]
    print(text["rope"].format(mib=rope_bytes / 2**20, intensity=rope_flops / rope_bytes))
    print(text["matmul"].format(n=n, mib=matmul_bytes / 2**20,
                                intensity=matmul_flops / matmul_bytes))  # fmt: skip
    for name, flops in peaks.items():
        print(text["ridge"].format(name=text[name], intensity=flops / bandwidth))


# --8<-- [end:intensity]

if __name__ == "__main__":
    show_intensity()
