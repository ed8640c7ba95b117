-- Version 3 on every dialect is "item pages". On PostgreSQL it packs a thread's items 32 to a row,
-- because PostgreSQL compresses (TOAST) only rows above ~2 kB. InnoDB has no such threshold to beat:
-- MySQL items stay one row each, and this version changes nothing, so that a schema version means
-- the same step on every dialect (and later versions keep their numbers).
SELECT 1;
