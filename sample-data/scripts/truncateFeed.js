// Blog v3, post-trigger on `feed` (key /type), named on every insert: keeps the 100 newest
// posts. A query in a script reads the state from before the script's own write, so the
// count is one short: the inserted post is added by hand, as the guide does.
function truncateFeed() {
    const maxDocs = 100;
    var collection = getContext().getCollection();
    collection.queryDocuments(
        collection.getSelfLink(),
        "SELECT VALUE COUNT(1) FROM f",
        function (err, results) {
            if (err) throw err;
            // the query didn't count the newly inserted doc
            var count = results[0] + 1;
            if (count > maxDocs) {
                var excess = count - maxDocs;
                collection.queryDocuments(
                    collection.getSelfLink(),
                    `SELECT TOP ${excess} * FROM f ORDER BY f.creationDate`,
                    function (err, oldest) {
                        if (err) throw err;
                        deleteNext(oldest, 0);
                    });
            }
        });

    function deleteNext(docs, i) {
        if (i >= docs.length) return;
        collection.deleteDocument(docs[i]._self, function (err) {
            if (err) throw err;
            deleteNext(docs, i + 1);
        });
    }
}
