-- Tool-call audit: every tool call the model made in a thread (any namespace) with its result.
-- Tool results are found by their call id; this partial index keeps that lookup cheap.
CREATE INDEX IF NOT EXISTS items_tool_call_id
    ON items (thread_id, json_extract(value, '$.data.tool_call_id'))
    WHERE json_extract(value, '$.cls') IN ('ToolMessage', 'ToolMessageChunk');

CREATE VIEW IF NOT EXISTS tool_calls AS
SELECT
    call.thread_id                                  AS thread_id,
    call.item_no                                    AS item_no,
    c.key                                           AS position,
    json_extract(c.value, '$.id')                   AS call_id,
    json_extract(c.value, '$.name')                 AS tool,
    c.value -> '$.args'                             AS args,
    result.item_no                                  AS result_item_no,
    result.value -> '$.data.content'                AS result,
    CASE WHEN result.item_no IS NULL THEN 'pending'
         ELSE COALESCE(json_extract(result.value, '$.data.status'), 'success') END AS status
FROM items AS call
JOIN json_each(call.value, '$.data.tool_calls') AS c
LEFT JOIN items AS result
  ON result.thread_id = call.thread_id
 AND json_extract(result.value, '$.cls') IN ('ToolMessage', 'ToolMessageChunk')
 AND json_extract(result.value, '$.data.tool_call_id') = json_extract(c.value, '$.id')
WHERE json_extract(call.value, '$.cls') IN ('AIMessage', 'AIMessageChunk');
