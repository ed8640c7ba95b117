-- Tool-call audit: every tool call the model made in a thread (any namespace) with its result.
-- Tool results are found by their call id: an indexed virtual column keeps that lookup cheap (MariaDB
-- has no functional indexes; MySQL 8 and MariaDB both index generated columns). Only its first 191
-- characters are indexed, so a longer (hostile) id is still stored; the view compares whole ids.
ALTER TABLE items ADD COLUMN tool_call_id VARCHAR(191)
    AS (LEFT(JSON_UNQUOTE(JSON_EXTRACT(value, '$.data.tool_call_id')), 191)) VIRTUAL;
CREATE INDEX items_tool_call_id ON items (thread_id, tool_call_id);

CREATE OR REPLACE VIEW tool_calls AS
SELECT
    asked.thread_id                                               AS thread_id,
    asked.item_no                                                 AS item_no,
    c.`position`                                                 AS `position`,
    JSON_UNQUOTE(JSON_EXTRACT(c.value, '$.id'))                  AS call_id,
    JSON_UNQUOTE(JSON_EXTRACT(c.value, '$.name'))                AS tool,
    JSON_EXTRACT(c.value, '$.args')                              AS args,
    result.item_no                                               AS result_item_no,
    JSON_EXTRACT(result.value, '$.data.content')                 AS result,
    CASE WHEN result.item_no IS NULL THEN 'pending'
         ELSE COALESCE(JSON_UNQUOTE(JSON_EXTRACT(result.value, '$.data.status')), 'success') END AS status
FROM items AS asked
JOIN JSON_TABLE(asked.value, '$.data.tool_calls[*]'
                COLUMNS (`position` FOR ORDINALITY, value JSON PATH '$')) AS c
LEFT JOIN items AS result
  ON result.thread_id = asked.thread_id
 AND result.tool_call_id = LEFT(JSON_UNQUOTE(JSON_EXTRACT(c.value, '$.id')), 191)
 AND JSON_UNQUOTE(JSON_EXTRACT(result.value, '$.cls')) IN ('ToolMessage', 'ToolMessageChunk')
 AND CAST(JSON_UNQUOTE(JSON_EXTRACT(result.value, '$.data.tool_call_id')) AS BINARY)
   = CAST(JSON_UNQUOTE(JSON_EXTRACT(c.value, '$.id')) AS BINARY)
WHERE JSON_UNQUOTE(JSON_EXTRACT(asked.value, '$.cls')) IN ('AIMessage', 'AIMessageChunk');
