// WebStore, stored procedure on `customer` (key /customerId), executed with the customer's
// key: creates the sales order and increments the customer's salesOrderCount in the same
// logical partition, as one transaction, so the back-office query ordering customers by
// salesOrderCount stays right.
function createSalesOrder(order) {
    var collection = getContext().getCollection();
    var customerLink = `${collection.getAltLink()}/docs/${order.customerId}`;
    collection.readDocument(customerLink, function (err, customer) {
        if (err) throw err;
        customer.salesOrderCount = (customer.salesOrderCount || 0) + 1;
        collection.replaceDocument(customer._self, customer, { etag: customer._etag }, function (err) {
            if (err) throw err;
            order.type = "salesOrder";
            collection.createDocument(collection.getSelfLink(), order, function (err, created) {
                if (err) throw err;
                getContext().getResponse().setBody({ order: created.id, salesOrderCount: customer.salesOrderCount });
            });
        });
    });
}
