"""Chapter "RoPE beyond one dimension": TODO(new-chapter) one line on what this code shows.

Run it: python snippets/multi_axis_rope/multi_axis_rope.py

Both pages include the sections below by name (`--8<-- "snippets/multi_axis_rope/multi_axis_rope.py:setup"`).
A section runs after the sections above it on the page, in one namespace, as a reader pastes
them; seed every random generator and print only what the page shows under the block.
"""

# --8<-- [start:setup]
import torch

torch.manual_seed(0)
# TODO(new-chapter) replace this example with the chapter's code (import posenc to use the library)
positions = torch.arange(4)
print(positions.tolist())
# --8<-- [end:setup]

# --8<-- [start:exercise]
# TODO(new-chapter) the code of the worked answer; assert what the prose claims
total = positions.sum().item()
assert total == 0 + 1 + 2 + 3
print(total)
# --8<-- [end:exercise]
