package edu.pku.harness.ui

import edu.pku.harness.SEATS
import org.junit.Test
import kotlin.test.assertEquals

class PrettyJsonTest {
    @Test fun indents_members_and_keeps_every_value_exact() {
        assertEquals(
            "{\n  \"canteen\": \"学一食堂\",\n  \"seats\": 2,\n  \"time\": \"12:00\"\n}",
            prettyJson(SEATS),
        )
    }

    @Test fun leaves_strings_with_brackets_quotes_and_commas_untouched() {
        assertEquals(
            "{\n  \"q\": \"a, {b}: [c] \\\"d\\\"\",\n  \"list\": [\n    1,\n    {}\n  ],\n  \"e\": []\n}",
            prettyJson("""{"q":"a, {b}: [c] \"d\"","list":[1, {}],"e":[ ]}"""),
        )
    }

    @Test fun text_that_is_not_json_comes_back_unchanged() {
        assertEquals("{\"a\":1", prettyJson("{\"a\":1"))
        assertEquals("not json}", prettyJson("not json}"))
        assertEquals("42", prettyJson("42"))
    }
}
