-- Items (messages) packed into pages: a row per item paid PostgreSQL's per-row and per-index cost on
-- ~1 kB values that are never compressed (only rows above ~2 kB are). A thread's items now sit in a
-- small tail table until item numbers complete a page of 32 (numbers 1-32, 33-64, …), which is then
-- written once as one row (`item_pages`) whose JSONB array TOAST compresses: 800 messages take
-- 0.42 MB instead of 1.12 MB. `items` stays as a view with the same columns, so SQL on messages
-- (and the tool_calls view) reads the same as before. Must match PAGE_ITEMS in postgres/saver.py.
CREATE TABLE IF NOT EXISTS item_tail (
    thread_id TEXT NOT NULL,
    item_no   BIGINT NOT NULL,
    hash      TEXT NOT NULL,
    value     JSONB NOT NULL,
    PRIMARY KEY (thread_id, item_no),
    UNIQUE (thread_id, hash)
);

CREATE TABLE IF NOT EXISTS item_pages (
    thread_id TEXT NOT NULL,
    first_no  BIGINT NOT NULL,
    last_no   BIGINT NOT NULL,
    item_nos  BIGINT[] NOT NULL,
    hashes    TEXT[] NOT NULL,
    items     JSONB NOT NULL,  -- a JSON array, item_nos[i] is items[i - 1]
    PRIMARY KEY (thread_id, first_no)
);

-- Existing items: complete pages (by number range) become pages, the rest the tail.
INSERT INTO item_pages (thread_id, first_no, last_no, item_nos, hashes, items)
SELECT i.thread_id, min(i.item_no), max(i.item_no), array_agg(i.item_no ORDER BY i.item_no),
       array_agg(i.hash ORDER BY i.item_no), jsonb_agg(i.value ORDER BY i.item_no)
FROM items AS i JOIN threads AS t ON t.thread_id = i.thread_id
WHERE (i.item_no - 1) / 32 < (t.next_item - 1) / 32
GROUP BY i.thread_id, (i.item_no - 1) / 32;

INSERT INTO item_tail (thread_id, item_no, hash, value)
SELECT i.thread_id, i.item_no, i.hash, i.value
FROM items AS i LEFT JOIN threads AS t ON t.thread_id = i.thread_id
WHERE t.thread_id IS NULL OR (i.item_no - 1) / 32 >= (t.next_item - 1) / 32;

DROP VIEW IF EXISTS tool_calls;
DROP TABLE items;

CREATE VIEW items AS
SELECT thread_id, item_no, hash, value FROM item_tail
UNION ALL
SELECT p.thread_id, p.item_nos[e.ord], p.hashes[e.ord], e.value
FROM item_pages AS p CROSS JOIN LATERAL jsonb_array_elements(p.items) WITH ORDINALITY AS e (value, ord);

-- As in 002, over the view (tool results are found by a scan of the thread's items).
CREATE VIEW tool_calls AS
SELECT
    call.thread_id                                  AS thread_id,
    call.item_no                                    AS item_no,
    c.position                                      AS position,
    c.value->>'id'                                  AS call_id,
    c.value->>'name'                                AS tool,
    c.value->'args'                                 AS args,
    result.item_no                                  AS result_item_no,
    result.value->'data'->'content'                 AS result,
    CASE WHEN result.item_no IS NULL THEN 'pending'
         ELSE COALESCE(result.value->'data'->>'status', 'success') END AS status
FROM items AS call
CROSS JOIN LATERAL jsonb_array_elements(call.value->'data'->'tool_calls') WITH ORDINALITY AS c (value, position)
LEFT JOIN items AS result
  ON result.thread_id = call.thread_id
 AND result.value->>'cls' IN ('ToolMessage', 'ToolMessageChunk')
 AND result.value->'data'->>'tool_call_id' = c.value->>'id'
WHERE call.value->>'cls' IN ('AIMessage', 'AIMessageChunk')
  AND jsonb_typeof(call.value->'data'->'tool_calls') = 'array';
