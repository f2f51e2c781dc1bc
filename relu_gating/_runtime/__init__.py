"""What a run of relu-gating needs from the machine (private): BLAS threads that fit the usable cores
(``threads``), Ctrl-C and SIGTERM (``interrupt``), progress lines (``progress``), tasks on executors
(``executors``), memory (``alloc``: the allocator warmed once; ``collector``: the cyclic collector paused
while acyclic structures are built) and files (``files``: checked outputs, atomic writes, hashes).

Nothing is imported here: each module is loaded where it is used (the checker loads ``alloc`` and
``collector`` only).
"""
