-- Tool-call audit: every tool call the model made in a thread (any namespace) with its result.
-- Tool results are found by their call id; this partial index keeps that lookup cheap.
CREATE INDEX IF NOT EXISTS items_tool_call_id
    ON items (thread_id, (value->'data'->>'tool_call_id'))
    WHERE value->>'cls' IN ('ToolMessage', 'ToolMessageChunk');

CREATE OR REPLACE VIEW tool_calls AS
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
