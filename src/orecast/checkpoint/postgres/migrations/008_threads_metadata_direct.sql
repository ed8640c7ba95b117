-- The threads' metadata index takes each new entry into its tree at once, not into a pending list
-- first (GIN's `fastupdate`): a thread's row gets a new index entry whenever its `updated_at` moves
-- (every 10 ms at most, see STORE_PUT), and the pending list's pages, then the free-space map VACUUM
-- makes for them, held 48 kB of a 200-turn thread's store for one row, against 16 kB without
-- (docs/benchmarks.md). Entries are few and small (the thread's user_id and the like): taking them
-- directly costs the server little.
ALTER INDEX threads_metadata SET (fastupdate = off);
