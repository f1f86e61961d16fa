"""What every codec shares, one job per module; never imports a codec.

`protocols` (the `Codec` contract), `arguments` (parsing and repair), `ids`, `wire` (JSON values),
`conversation` (history rewrites), `degradations` (warn once), `accumulator` (streamed parts),
`stream_encoding` (the segmented stream encoder), `shapes` and `guard` (the decoding boundary).
"""
