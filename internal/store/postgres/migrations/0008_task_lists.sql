-- Teams' shared task lists (DESIGN S-A6, internal/tasklist): a row per
-- list, locked FOR UPDATE by every update of the list (which serialises
-- claimers on every node) and numbering its items, and a row per item,
-- kept as the JSON of tasklist.Item. A change is announced on the
-- cadre_task_list channel, the payload being the list's id.
CREATE TABLE task_lists (
	id         TEXT        PRIMARY KEY,
	next_item  INTEGER     NOT NULL,
	updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

CREATE TABLE task_list_items (
	list TEXT    NOT NULL REFERENCES task_lists (id),
	id   TEXT    NOT NULL,
	seq  INTEGER NOT NULL, -- creation order: the item's number
	item JSONB   NOT NULL,
	PRIMARY KEY (list, id)
);
