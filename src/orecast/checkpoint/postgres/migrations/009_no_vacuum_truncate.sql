-- VACUUM keeps the emptied pages of the item tail and of the threads table instead of cutting them off
-- the end of the file. The tail is a queue: a thread's items wait there until they complete a page
-- (migration 003), are moved out, and the saver then vacuums the tail and the threads table (whose
-- row of a running thread is updated at every step). To cut pages off, VACUUM needs the table's
-- exclusive lock, which every put's statement conflicts with (it inserts into the tail and updates
-- the thread's row); VACUUM retried every 50 ms, up to 160 ms, while the next seals found it still
-- running and started none (5 of 17 in a traced run), so the tail grew by about a page a turn
-- meanwhile: after 200 turns of one thread it held 16-152 kB from run to run. With other sessions
-- writing on the server the threads table's VACUUM stalled the same way (7 of 25 seals found one
-- running; with its pages kept, none did). Kept, the pages are
-- reused, every VACUUM takes 0.3-3 ms, and the tail holds its working set, 80 kB (48 kB of pages, the
-- free-space and visibility maps); the store after the benchmark's 200 turns is the same to the byte
-- from run to run on a quiet server (docs/benchmarks.md). `VACUUM FULL item_tail` (or threads) gives
-- the space back after a burst.
ALTER TABLE item_tail SET (vacuum_truncate = false);
ALTER TABLE threads SET (vacuum_truncate = false);
