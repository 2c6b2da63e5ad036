// Blog (v2, v3), stored procedure on `posts`: createComment's twin for likes (likeCount).
function createLike(postId, like) {
    var collection = getContext().getCollection();
    var postLink = `${collection.getAltLink()}/docs/${postId}`;
    collection.readDocument(postLink, function (err, post) {
        if (err) throw err;
        post.likeCount = (post.likeCount || 0) + 1;
        collection.replaceDocument(post._self, post, function (err) {
            if (err) throw err;
            like.postId = postId;
            collection.createDocument(collection.getSelfLink(), like);
        });
    });
}
